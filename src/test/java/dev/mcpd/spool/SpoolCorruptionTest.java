package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** Issue 6: damaged spool bytes are kept in corrupt/, counted and logged once; the entries around them still go. */
class SpoolCorruptionTest {

    private static final Duration SHORT = Duration.ofMillis(50);

    @TempDir
    Path dir;

    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private Logger spoolLogger;

    @BeforeEach
    void captureSpoolLog() {
        spoolLogger = (Logger) LoggerFactory.getLogger(Spool.class);
        log.start();
        spoolLogger.addAppender(log);
    }

    @AfterEach
    void releaseSpoolLog() {
        spoolLogger.detachAppender(log);
    }

    private static SpoolRequest request(String target, int bodyBytes) {
        byte[] body = new byte[bodyBytes];
        new Random(target.hashCode()).nextBytes(body);
        return new SpoolRequest("POST", target, "application/json", "", "key" + target, Optional.empty(),
                1_700_000_000_000L, body);
    }

    /** One run of the spool appending {@code targets}, then closing: they land in one segment of their own. */
    private Path spoolRun(String... targets) throws Exception {
        try (Spool spool = Spool.open(dir)) {
            for (String target : targets) {
                spool.append(request(target, 200)).get(10, TimeUnit.SECONDS);
            }
        }
        List<Path> segments = SegmentScan.segmentsIn(dir);
        return segments.get(segments.size() - 1);
    }

    /** Delivers everything waiting (marks it done) and returns the targets, in order. */
    private static List<String> deliverAll(Spool spool) throws Exception {
        List<String> targets = new ArrayList<>();
        for (Optional<SpoolEntry> e = spool.next(SHORT); e.isPresent(); e = spool.next(SHORT)) {
            targets.add(e.get().request().target());
            spool.done(e.get().seq());
        }
        return targets;
    }

    /** Makes delivery reach the oldest segment (read it, checking every record), without finishing an entry. */
    private static void readSealedSegments(Spool spool) throws Exception {
        spool.next(SHORT).ifPresent(entry -> spool.release(entry.seq()));
    }

    private static void flipByte(Path file, long at) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            channel.write(ByteBuffer.wrap(new byte[] {(byte) (one.get(0) ^ 0x40)}), at);
        }
    }

    private static byte[] slice(byte[] bytes, long from, long length) {
        return Arrays.copyOfRange(bytes, (int) from, (int) (from + length));
    }

    private List<Path> corruptFiles() throws IOException {
        Path corrupt = dir.resolve("corrupt");
        if (!Files.isDirectory(corrupt)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(corrupt)) {
            return files.sorted().toList();
        }
    }

    private List<ILoggingEvent> lines(Level level) {
        return log.list.stream().filter(e -> e.getLevel() == level).toList();
    }

    @Test
    void aFlippedByteInAMiddleRecordHidesOnlyThatRecordWhichIsKeptInCorruptLoggedOnceAndCounted() throws Exception {
        Path segment = spoolRun("/m0", "/m1", "/m2", "/m3", "/m4");
        EntryLocation third = SegmentScan.of(segment).entries().get(2);
        byte[] original = Files.readAllBytes(segment);
        flipByte(segment, third.offset() + third.size() - 7); // inside /m2's body
        byte[] damaged = Files.readAllBytes(segment);
        log.list.clear();

        try (Spool spool = Spool.open(dir)) {
            assertEquals(0, spool.corrupted(), "a sealed segment is read when delivery reaches it, not at start");
            assertEquals(List.of("/m0", "/m1", "/m3", "/m4"), deliverAll(spool),
                    "the entries before and after the damaged one are delivered");
            assertEquals(1, spool.corrupted());
            assertEquals(0, spool.entries());
        }

        String name = SpoolFiles.baseName(1) + "-" + third.offset() + ".bytes";
        List<Path> kept = corruptFiles();
        assertEquals(List.of(dir.resolve("corrupt").resolve(name)), kept);
        assertArrayEquals(slice(damaged, third.offset(), third.size()), Files.readAllBytes(kept.get(0)),
                "corrupt/ holds exactly the damaged record's bytes as found");
        assertFalse(Arrays.equals(slice(original, third.offset(), third.size()), Files.readAllBytes(kept.get(0))));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(kept.get(0))));
        List<ILoggingEvent> warnings = lines(Level.WARN);
        assertEquals(1, warnings.size(), "one WARN line: " + warnings);
        String line = warnings.get(0).getFormattedMessage();
        assertTrue(line.contains("offset " + third.offset()) && line.contains(name) && line.contains("checksum"),
                line);
        assertEquals(List.of(), lines(Level.ERROR));
    }

    @Test
    void theReaderResynchronisesAfterADamagedRecordAsTheSpoolDoes() throws Exception {
        Path segment = spoolRun("/r0", "/r1", "/r2");
        EntryLocation second = SegmentScan.of(segment).entries().get(1);
        flipByte(segment, second.offset() + 2); // inside its magic: the frame itself is broken

        SpoolReader.Contents contents = SpoolReader.read(dir);
        assertEquals(List.of("/r0", "/r2"), contents.entries().stream().map(e -> e.request().target()).toList());
        assertEquals(1, contents.damage().size(), contents.damage().toString());
        assertTrue(contents.damage().get(0).contains(second.size() + " bytes from offset " + second.offset()
                + " are damaged"), contents.damage().toString());
    }

    @Test
    void reopeningTwiceDoesNotKeepTheSameDamageTwiceNorCountOrWarnAgain() throws Exception {
        Path segment = spoolRun("/o0", "/o1", "/o2");
        EntryLocation second = SegmentScan.of(segment).entries().get(1);
        flipByte(segment, second.offset() + second.size() - 1);

        try (Spool spool = Spool.open(dir)) {
            readSealedSegments(spool);
            assertEquals(1, spool.corrupted());
            assertEquals(2, spool.entries());
        }
        Path kept = corruptFiles().get(0);
        byte[] keptBytes = Files.readAllBytes(kept);
        log.list.clear();
        try (Spool spool = Spool.open(dir)) {
            assertEquals(0, spool.corrupted(), "damage kept at an earlier start is not counted again");
            assertEquals(2, spool.entries());
        }
        assertEquals(List.of(kept), corruptFiles(), "still one copy");
        assertArrayEquals(keptBytes, Files.readAllBytes(kept));
        assertEquals(List.of(), lines(Level.WARN));
        assertEquals(1, log.list.stream().filter(e -> e.getFormattedMessage().contains("earlier start")).count(),
                "one line says the damage is known: " + log.list);
    }

    @Test
    void garbageAppendedToASealedSegmentIsKeptAndTheEntriesBeforeAndAfterItAreDelivered() throws Exception {
        Path sealed = spoolRun("/g0", "/g1", "/g2");
        spoolRun("/g3"); // a later segment: the first one is sealed
        long sealedSize = Files.size(sealed);
        byte[] garbage = new byte[300];
        new Random(7).nextBytes(garbage);
        garbage[0] = 'x'; // not our magic
        Files.write(sealed, garbage, StandardOpenOption.APPEND);

        try (Spool spool = Spool.open(dir)) {
            assertEquals(1, spool.corrupted());
            assertEquals(List.of("/g0", "/g1", "/g2", "/g3"), deliverAll(spool));
            long seq = spool.append(request("/new", 10)).get(10, TimeUnit.SECONDS).seq();
            assertTrue(seq > 4 + 300 / RecordCodec.MIN_ENTRY_BYTES, "numbers the lost bytes could have held are "
                    + "never given again: " + seq);
        }
        List<Path> kept = corruptFiles();
        assertEquals(List.of(dir.resolve("corrupt").resolve(SpoolFiles.baseName(1) + "-" + sealedSize + ".bytes")),
                kept);
        assertArrayEquals(garbage, Files.readAllBytes(kept.get(0)));
        assertEquals(1, lines(Level.WARN).size(), log.list.toString());
    }

    @Test
    void aSealedSegmentCutShortInsideARecordIsDamageNotATornTail() throws Exception {
        Path first = spoolRun("/c0", "/c1", "/c2");
        spoolRun("/c3", "/c4");
        EntryLocation last = SegmentScan.of(first).entries().get(2);
        byte[] before = Files.readAllBytes(first);
        try (FileChannel channel = FileChannel.open(first, StandardOpenOption.WRITE)) {
            channel.truncate(last.offset() + 50); // the file system lost the end of an acknowledged record
        }

        try (Spool spool = Spool.open(dir)) {
            assertEquals(1, spool.corrupted());
            assertEquals(List.of("/c0", "/c1", "/c3", "/c4"), deliverAll(spool));
        }
        List<Path> kept = corruptFiles();
        assertEquals(1, kept.size());
        assertArrayEquals(slice(before, last.offset(), 50), Files.readAllBytes(kept.get(0)));
        assertEquals(1, lines(Level.WARN).size(), log.list.toString());
    }

    @Test
    void aTornTailOfTheSegmentBeingWrittenIsReportedOnceAStartButNeverKeptNorCountedEvenAfterRestarts()
            throws Exception {
        Path segment = spoolRun("/t0", "/t1", "/t2");
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            channel.truncate(channel.size() - 10); // a crash tore the last batch
        }
        for (int start = 0; start < 3; start++) {
            log.list.clear();
            try (Spool spool = Spool.open(dir)) {
                assertEquals(0, spool.corrupted());
                assertEquals(start < 2 ? 2 : 3, spool.entries());
                if (start == 1) {
                    spool.append(request("/after", 10)).get(10, TimeUnit.SECONDS); // a later segment holds entries
                }
            }
            assertEquals(List.of(), corruptFiles());
            assertEquals(List.of(), lines(Level.WARN), "start " + start);
            assertEquals(1, log.list.stream().filter(e -> e.getFormattedMessage().contains("torn tail")).count(),
                    "start " + start + ": " + log.list);
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(List.of("/t0", "/t1", "/after"), deliverAll(spool));
        }
    }

    @Test
    void theRelayNeverCrashLoopsOnASpoolWhoseEverySegmentIsGarbage() throws Exception {
        Files.createDirectories(dir);
        List<byte[]> garbage = new ArrayList<>();
        long[] names = {1, 40, 900};
        for (int i = 0; i < names.length; i++) {
            byte[] bytes = new byte[1000 * (i + 1)];
            new Random(i).nextBytes(bytes);
            garbage.add(bytes);
            Files.write(SpoolFiles.segment(dir, names[i]), bytes);
        }

        for (int start = 0; start < 2; start++) {
            try (Spool spool = Spool.open(dir)) {
                assertEquals(0, spool.entries());
                assertEquals(start == 0 ? 3 : 0, spool.corrupted());
                long seq = spool.append(request("/fresh" + start, 10)).get(10, TimeUnit.SECONDS).seq();
                assertTrue(seq > 900, "new entries are numbered above every garbage segment's name: " + seq);
                assertEquals(List.of("/fresh" + start), deliverAll(spool));
            }
        }
        List<Path> kept = corruptFiles();
        assertEquals(3, kept.size(), kept.toString());
        for (int i = 0; i < names.length; i++) {
            assertArrayEquals(garbage.get(i), Files.readAllBytes(dir.resolve("corrupt")
                    .resolve(SpoolFiles.baseName(names[i]) + "-0.bytes")), "garbage segment " + names[i] + " kept");
        }
    }

    @Test
    void anEntryDamagedWhileTheRelayRunsIsCountedAndLoggedOnce() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            for (int i = 0; i < 3; i++) {
                spool.append(request("/d" + i, 100)).get(10, TimeUnit.SECONDS);
            }
            List<Path> segments = SegmentScan.segmentsIn(dir);
            Path segment = segments.get(segments.size() - 1);
            EntryLocation second = SegmentScan.of(segment).entries().get(1);
            flipByte(segment, second.offset() + second.size() - 3);
            log.list.clear();

            assertEquals(List.of("/d0", "/d2"), deliverAll(spool));
            assertEquals(1, spool.corrupted());
            assertEquals(List.of(dir.resolve("corrupt").resolve(SpoolFiles.baseName(SpoolFiles.firstSeqOf(segment))
                    + "-" + second.offset() + ".bytes")), corruptFiles());
            assertEquals(1, lines(Level.WARN).size(), log.list.toString());
        }
    }

    @Test
    void damageKeptAtDeliveryIsNotKeptAgainAtTheNextStartUnlessItGrew() throws Exception {
        Path segment;
        EntryLocation second;
        EntryLocation third;
        try (Spool spool = Spool.open(dir)) {
            for (int i = 0; i < 4; i++) {
                spool.append(request("/k" + i, 100)).get(10, TimeUnit.SECONDS);
            }
            segment = SegmentScan.segmentsIn(dir).get(0);
            second = SegmentScan.of(segment).entries().get(1);
            third = SegmentScan.of(segment).entries().get(2);
            flipByte(segment, second.offset() + second.size() - 3);
            assertEquals(List.of("/k0", "/k2", "/k3"), deliverAll(spool).subList(0, 3));
            assertEquals(1, spool.corrupted());
        }
        Path atDelivery = dir.resolve("corrupt").resolve(SpoolFiles.baseName(1) + "-" + second.offset() + ".bytes");
        assertEquals(List.of(atDelivery), corruptFiles());
        log.list.clear();
        try (Spool spool = Spool.open(dir)) {
            assertEquals(0, spool.corrupted(), "the start finds the same damage, already kept");
            assertEquals(0, spool.entries());
        }
        assertEquals(List.of(atDelivery), corruptFiles());
        assertEquals(List.of(), lines(Level.WARN));
        assertTrue(Files.notExists(segment), "every entry was done: the segment went, its damage stays in corrupt/");

        Path again = spoolRun("/n0", "/n1", "/n2", "/n3");
        long base = SpoolFiles.firstSeqOf(again);
        EntryLocation one = SegmentScan.of(again).entries().get(1);
        EntryLocation two = SegmentScan.of(again).entries().get(2);
        flipByte(again, one.offset() + one.size() - 3);
        try (Spool spool = Spool.open(dir)) {
            readSealedSegments(spool);
            assertEquals(1, spool.corrupted());
        }
        Path kept = dir.resolve("corrupt").resolve(SpoolFiles.baseName(base) + "-" + one.offset() + ".bytes");
        assertTrue(Files.exists(kept));
        flipByte(again, two.offset() + two.size() - 3); // the damage grew into the next record
        try (Spool spool = Spool.open(dir)) {
            assertEquals(1, spool.corrupted(), "the longer region is new damage");
            assertEquals(List.of("/n0", "/n3"), deliverAll(spool));
        }
        Path grown = dir.resolve("corrupt").resolve(SpoolFiles.baseName(base) + "-" + one.offset() + "-"
                + (one.size() + two.size()) + ".bytes");
        assertEquals(List.of(atDelivery, kept, grown).stream().sorted().toList(), corruptFiles());
        assertEquals(one.size(), Files.size(kept), "the first copy is left as it was");
    }
}
