package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment several times the scanner's read window, with entries that straddle the window's edges and one larger
 * than the window: a scan finds every entry where it is, and damage past the first window hides only itself.
 */
class RecordScannerTest {

    private static final int ENTRIES = 400;
    private static final int LARGE = 300; // this one is larger than the window

    @TempDir
    Path dir;

    @Test
    void everyEntryOfASegmentLargerThanTheWindowIsFoundWhereItIs() throws Exception {
        Path segment = segmentOfVariedEntries();
        SegmentScan scan = SegmentScan.of(segment);
        assertEquals(ENTRIES, scan.entries().size());
        assertEquals(List.of(), scan.regions());
        assertTrue(straddlingAWindowEdge(scan.entries()) > 3, "the test must put entries across the window's edges");
        for (int i = 0; i < ENTRIES; i++) {
            EntryLocation entry = scan.entries().get(i);
            assertEquals(scan.entries().get(0).seq() + i, entry.seq());
            try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
                ByteBuffer payload = RecordScanner.readPayload(channel, entry.offset(), entry.size(),
                        RecordCodec.ENTRY_MAGIC);
                assertEquals("/v" + i, RecordCodec.decodeEntry(payload).target());
            }
        }
    }

    @Test
    void damagePastTheFirstWindowHidesOnlyTheEntryItIsIn() throws Exception {
        Path segment = segmentOfVariedEntries();
        List<EntryLocation> before = SegmentScan.of(segment).entries();
        EntryLocation victim = before.stream().filter(e -> e.offset() > 2L * RecordScanner.WINDOW_BYTES)
                .findFirst().orElseThrow();
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(new byte[] {0x5a, 0x5a}), victim.offset() + victim.size() - 2);
        }
        SegmentScan scan = SegmentScan.of(segment);
        List<Long> lost = new ArrayList<>(before.stream().map(EntryLocation::seq).toList());
        lost.removeAll(scan.entries().stream().map(EntryLocation::seq).toList());
        assertEquals(List.of(victim.seq()), lost);
        assertEquals(1, scan.regions().size());
        assertEquals(victim.offset(), scan.regions().get(0).offset());
        assertFalse(scan.regions().get(0).torn(), "damage in the middle is not a torn tail");
    }

    /** One segment of entries from a few bytes to a few KiB, and one of 300 KiB. */
    private Path segmentOfVariedEntries() throws Exception {
        try (Spool spool = Spool.open(dir, 64L * 1024 * 1024)) {
            for (int i = 0; i < ENTRIES; i++) {
                int size = i == LARGE ? 300 * 1024 : (i * 7919) % 6000;
                spool.append(new SpoolRequest("POST", "/v" + i, "application/json", "", "key-" + i,
                        Optional.empty(), 1L, new byte[size])).get(10, TimeUnit.SECONDS);
            }
        }
        List<Path> segments = SegmentScan.segmentsIn(dir);
        assertEquals(1, segments.size());
        return segments.get(0);
    }

    private static long straddlingAWindowEdge(List<EntryLocation> entries) {
        return entries.stream().filter(e -> e.offset() / RecordScanner.WINDOW_BYTES
                != (e.offset() + e.size() - 1) / RecordScanner.WINDOW_BYTES).count();
    }
}
