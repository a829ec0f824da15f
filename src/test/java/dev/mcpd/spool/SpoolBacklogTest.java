package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backlog costs memory per segment, not per entry, and a start does not read it: a sealed segment delivery has not
 * reached is known by its summary, and read — every record checked — when delivery comes to it.
 */
class SpoolBacklogTest {

    private static final Duration SHORT = Duration.ofMillis(200);
    /** Small segments, so that a few hundred entries make many. */
    private static final Spool.Options SMALL_SEGMENTS = new Spool.Options(4096, Long.MAX_VALUE);

    @TempDir
    Path dir;

    private static SpoolRequest request(long i, long receivedAt) {
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-" + i, Optional.empty(),
                receivedAt, ("{\"events\":[{\"i\":" + i + "}]}").getBytes());
    }

    /** Appends, waiting for every {@code inFlight}: few in flight make small commits, so small segments roll often. */
    private static void fill(Spool spool, long from, long count, long receivedAt) {
        fill(spool, from, count, receivedAt, 8);
    }

    private static void fill(Spool spool, long from, long count, long receivedAt, int inFlight) {
        List<CompletableFuture<SpoolReceipt>> written = new ArrayList<>();
        for (long i = from; i < from + count; i++) {
            written.add(spool.append(request(i, receivedAt)));
            if (written.size() == inFlight) {
                CompletableFuture.allOf(written.toArray(CompletableFuture[]::new)).join();
                written.clear();
            }
        }
        CompletableFuture.allOf(written.toArray(CompletableFuture[]::new)).join();
    }

    /** Delivers everything waiting, checking each sequence number comes once and in order; returns how many. */
    private static long drain(Spool spool) throws Exception {
        long count = 0;
        long previous = 0;
        for (Optional<SpoolEntry> e = spool.next(SHORT); e.isPresent(); e = spool.next(SHORT)) {
            assertTrue(e.get().seq() > previous, "in order, once each: " + e.get().seq() + " after " + previous);
            previous = e.get().seq();
            spool.done(e.get().seq());
            count++;
        }
        return count;
    }

    /** Entries in one small segment, at most: it rolls once past its size, after a commit of up to 8. */
    private static long perSegment() {
        return 4096 / RecordCodec.entrySize(request(0, 1)) + 8;
    }

    private long segmentFiles() throws IOException {
        return SegmentScan.segmentsIn(dir).size();
    }

    @Test
    void aRestartTakesSealedSegmentsFromTheirSummariesAndDeliveryReadsThemInOrder() throws Exception {
        long bytes;
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            fill(spool, 0, 300, 1_700_000_000_000L);
            bytes = spool.bytes();
        }
        assertTrue(segmentFiles() > 5, "many segments: " + segmentFiles());
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            assertEquals(0, spool.indexedEntries(), "nothing read at start");
            assertEquals(300, spool.entries());
            assertEquals(bytes, spool.bytes());
            assertEquals(Optional.of(1_700_000_000_000L), spool.oldestReceivedAtMillis());
            assertEquals(1, spool.oldestWaitingSeq());
            assertEquals(150, spool.waitingThrough(150));
            assertEquals(300, drain(spool));
            assertEquals(0, spool.entries());
            assertEquals(0, spool.bytes());
        }
        assertEquals(1, segmentFiles(), "delivered segments are deleted, only the new one stays");
    }

    @Test
    void entriesAppendedFarAheadOfDeliveryLeaveMemoryAndComeBackWhenItReachesThem() throws Exception {
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            fill(spool, 0, 20, 1L);
            Optional<SpoolEntry> first = spool.next(SHORT); // delivery is at the first segment
            fill(spool, 20, 2000, 1L);
            long perSegment = perSegment();
            assertTrue(spool.indexedEntries() <= 4 * perSegment,
                    "a few segments' entries in memory, not 2 020: " + spool.indexedEntries());
            spool.release(first.orElseThrow().seq());
            assertEquals(2020, drain(spool));
        }
    }

    @Test
    void aSummaryThatDoesNotMatchItsSegmentIsIgnoredAndTheSegmentReadAtStart() throws Exception {
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            fill(spool, 0, 100, 1L);
        }
        Path firstSegment = SegmentScan.segmentsIn(dir).get(0);
        Path secondSegment = SegmentScan.segmentsIn(dir).get(1);
        // one summary garbled, another segment grown behind its summary's back
        Path garbled = SegmentSummary.file(dir, SpoolFiles.firstSeqOf(firstSegment));
        try (FileChannel channel = FileChannel.open(garbled, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 20);
        }
        try (FileChannel channel = FileChannel.open(secondSegment, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap("garbage after the last record".getBytes()), Files.size(secondSegment));
        }
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            assertEquals(1, spool.corrupted(), "the grown segment was read at start, its garbage found");
            assertTrue(spool.indexedEntries() > 0, "the two segments were read");
            assertEquals(100, drain(spool));
        }
    }

    @Test
    void theSpoolMaxAgeSweepReachesEntriesOfSegmentsNotReadYet() throws Exception {
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            fill(spool, 0, 60, 1_000L);
            fill(spool, 60, 60, 5_000L);
        }
        try (Spool spool = Spool.open(dir, SMALL_SEGMENTS)) {
            List<SpoolEntry> expired = spool.takeReceivedBefore(2_000L, 1_000);
            assertEquals(60, expired.size());
            for (SpoolEntry entry : expired) {
                spool.done(entry.seq());
            }
            assertEquals(60, spool.entries());
            assertEquals(Optional.of(5_000L), spool.oldestReceivedAtMillis());
        }
    }

    @Test
    void aMillionWaitingEntriesAreNotReadAtStartAndEachIsDeliveredOnce() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            fill(spool, 0, 1_000_000, 1L, 4096);
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(1_000_000, spool.entries());
            assertEquals(0, spool.indexedEntries(), "a clean stop left every segment's summary: nothing read");
            assertEquals(1_000_000, drain(spool));
        }
    }

    @Test
    void afterACrashOnlyTheSegmentThatTookAppendsIsRead(@TempDir Path afterCrash) throws Exception {
        long segments;
        try (Spool running = Spool.open(dir, SMALL_SEGMENTS)) {
            fill(running, 0, 200, 1L);
            segments = segmentFiles();
            // What a kill -9 leaves now: the files as they are, the open segment without a summary.
            try (var files = Files.list(dir)) {
                for (Path file : files.filter(Files::isRegularFile).toList()) {
                    if (!file.getFileName().toString().equals(SpoolLock.FILE)) {
                        Files.copy(file, afterCrash.resolve(file.getFileName()));
                    }
                }
            }
        }
        try (Spool spool = Spool.open(afterCrash, SMALL_SEGMENTS)) {
            long perSegment = perSegment();
            assertTrue(spool.indexedEntries() <= perSegment, "only the open segment was read: "
                    + spool.indexedEntries() + " of 200 in " + segments + " segments");
            assertEquals(200, spool.entries());
            assertEquals(200, drain(spool));
        }
    }
}
