package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How delivery takes entries out of the spool: oldest first, once at a time, and only for good when done. */
class SpoolDeliveryTest {

    static final Duration SHORT = Duration.ofMillis(50);
    static final Duration LONG = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private static SpoolRequest request(String target) {
        return new SpoolRequest("POST", target, "application/json", "", "key" + target, Optional.empty(),
                System.currentTimeMillis(), target.getBytes(StandardCharsets.UTF_8));
    }

    private static void appendAll(Spool spool, int count, String prefix) throws Exception {
        List<CompletableFuture<SpoolReceipt>> receipts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            receipts.add(spool.append(request(prefix + i)));
        }
        for (CompletableFuture<SpoolReceipt> receipt : receipts) {
            receipt.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void entriesAreHandedOutOldestFirst() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 5, "/e");
            for (int i = 0; i < 5; i++) {
                assertEquals("/e" + i, spool.next(SHORT).orElseThrow().request().target());
            }
            assertTrue(spool.next(SHORT).isEmpty());
        }
    }

    @Test
    void concurrentTakersNeverGetTheSameEntry() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 400, "/c");
            Set<Long> taken = Collections.synchronizedSet(new HashSet<>());
            List<Thread> takers = new ArrayList<>();
            List<Long> duplicates = Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < 4; t++) {
                Thread taker = new Thread(() -> {
                    try {
                        for (Optional<SpoolEntry> e = spool.next(SHORT); e.isPresent(); e = spool.next(SHORT)) {
                            if (!taken.add(e.get().seq())) {
                                duplicates.add(e.get().seq());
                            }
                            spool.done(e.get().seq());
                        }
                    } catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                });
                takers.add(taker);
                taker.start();
            }
            for (Thread taker : takers) {
                taker.join(30_000);
            }
            assertEquals(List.of(), duplicates);
            assertEquals(400, taken.size());
            assertEquals(0, spool.entries());
            assertEquals(0, spool.bytes());
        }
    }

    @Test
    void aWaitingTakerWakesWhenAnEntryIsCommitted() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            CompletableFuture<Optional<SpoolEntry>> taken = CompletableFuture.supplyAsync(() -> {
                try {
                    return spool.next(LONG);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            spool.append(request("/late")).get(10, TimeUnit.SECONDS);
            Optional<SpoolEntry> entry = taken.get(5, TimeUnit.SECONDS);
            assertEquals("/late", entry.orElseThrow().request().target(), "woken by the commit, not by a poll");
        }
    }

    @Test
    void everyWaitingTakerWakesWhenACommitBringsAnEntryForEach() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            List<CompletableFuture<Optional<SpoolEntry>>> takers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                takers.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return spool.next(Duration.ofSeconds(60));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, runnable -> new Thread(runnable).start()));
            }
            // A commit wakes one taker, and each taker wakes the next while entries are left: none may sleep on.
            appendAll(spool, 4, "/w");
            Set<String> targets = new HashSet<>();
            for (CompletableFuture<Optional<SpoolEntry>> taker : takers) {
                targets.add(taker.get(20, TimeUnit.SECONDS).orElseThrow().request().target());
            }
            assertEquals(Set.of("/w0", "/w1", "/w2", "/w3"), targets);
        }
    }

    @Test
    void doneEntriesLeaveTheSpoolForGood() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 3, "/d");
            spool.done(spool.next(SHORT).orElseThrow().seq());
            spool.done(spool.next(SHORT).orElseThrow().seq());
            assertEquals(1, spool.entries());
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(1, spool.entries());
            assertEquals("/d2", spool.next(SHORT).orElseThrow().request().target());
            assertTrue(spool.next(SHORT).isEmpty());
        }
    }

    @Test
    void entriesHandedOutButNotDoneGoOutAgainAfterARestart() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 2, "/r");
            spool.next(SHORT).orElseThrow();
            spool.next(SHORT).orElseThrow(); // in flight when the process stops
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(2, spool.entries());
            assertEquals("/r0", spool.next(SHORT).orElseThrow().request().target());
            assertEquals("/r1", spool.next(SHORT).orElseThrow().request().target());
        }
    }

    @Test
    void aReleasedEntryGoesOutAgainBeforeNewerOnes() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 3, "/l");
            SpoolEntry first = spool.next(SHORT).orElseThrow();
            spool.next(SHORT).orElseThrow();
            spool.release(first.seq());
            assertEquals("/l0", spool.next(SHORT).orElseThrow().request().target());
            assertEquals("/l2", spool.next(SHORT).orElseThrow().request().target());
        }
    }

    @Test
    void aSealedSegmentIsDeletedOnceAllItsEntriesAreDone() throws Exception {
        try (Spool spool = Spool.open(dir, 2048)) {
            for (int i = 0; i < 30; i++) {
                spool.append(request("/s" + "x".repeat(200) + i)).get(10, TimeUnit.SECONDS);
            }
            int segmentsBefore = SegmentScan.segmentsIn(dir).size();
            assertTrue(segmentsBefore > 2);
            for (Optional<SpoolEntry> e = spool.next(SHORT); e.isPresent(); e = spool.next(SHORT)) {
                spool.done(e.get().seq());
            }
            List<Path> left = Files.list(dir).filter(f -> !Files.isDirectory(f))
                    .filter(f -> !f.getFileName().toString().equals(SpoolIdentity.FILE)) // the spool's id
                    .filter(f -> !f.getFileName().toString().equals(SpoolLock.FILE)).toList(); // and its lock
            List<Path> segments = SegmentScan.segmentsIn(dir);
            assertEquals(1, segments.size(), "only the segment taking appends is left: " + left);
            String activeBase = segments.get(0).getFileName().toString().replace(".seg", "");
            for (Path file : left) {
                assertTrue(file.getFileName().toString().startsWith(activeBase), "left behind: " + file);
            }
        }
    }

    @Test
    void aBatchDoneAtOnceAcrossSegmentsLeavesTheSpoolForGoodAndTheRestStays() throws Exception {
        long[] batch = new long[25];
        try (Spool spool = Spool.open(dir, 2048)) {
            for (int i = 0; i < 30; i++) {
                spool.append(request("/b" + "x".repeat(200) + i)).get(10, TimeUnit.SECONDS);
            }
            assertTrue(SegmentScan.segmentsIn(dir).size() > 2, "the batch spans segments");
            for (int i = 0; i < batch.length; i++) {
                batch[i] = spool.next(SHORT).orElseThrow().seq();
            }
            spool.done(batch, 20); // the last five stay out for delivery, not done
            assertEquals(10, spool.entries());
            spool.release(batch[20]);
        }
        try (Spool spool = Spool.open(dir)) {
            List<String> waiting = new ArrayList<>();
            for (Optional<SpoolEntry> e = spool.next(SHORT); e.isPresent(); e = spool.next(SHORT)) {
                waiting.add(e.get().request().target().replace("x".repeat(200), ""));
            }
            assertEquals(List.of("/b20", "/b21", "/b22", "/b23", "/b24", "/b25", "/b26", "/b27", "/b28", "/b29"),
                    waiting, "what a restart finds waiting: only what was not done");
        }
    }

    @Test
    void anEntryNotOutForDeliveryInABatchIsRefusedOnceTheOthersAreDone() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 3, "/n");
            long first = spool.next(SHORT).orElseThrow().seq();
            long second = spool.next(SHORT).orElseThrow().seq();
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> spool.done(new long[] {first, 999_999, second}, 3));
            assertTrue(refused.getMessage().contains("999999"), refused.getMessage());
            assertEquals(1, spool.entries(), "the two that were out are done all the same");
            assertEquals("/n2", spool.next(SHORT).orElseThrow().request().target());
        }
    }

    @Test
    void theOldestWaitingEntryIsTrackedUntilItIsDone() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            assertTrue(spool.oldestReceivedAtMillis().isEmpty());
            SpoolRequest old = new SpoolRequest("POST", "/old", "", "", "k1", Optional.empty(), 1_000L, new byte[0]);
            SpoolRequest young = new SpoolRequest("POST", "/young", "", "", "k2", Optional.empty(), 2_000L,
                    new byte[0]);
            spool.append(old).get(10, TimeUnit.SECONDS);
            spool.append(young).get(10, TimeUnit.SECONDS);
            SpoolEntry first = spool.next(SHORT).orElseThrow();
            assertEquals(Optional.of(1_000L), spool.oldestReceivedAtMillis(), "in flight still counts as waiting");
            spool.done(first.seq());
            assertEquals(Optional.of(2_000L), spool.oldestReceivedAtMillis());
        }
    }

    @Test
    void anEntryDamagedOnDiskIsKeptInCorruptAndTakenOutOfDelivery() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            appendAll(spool, 2, "/k");
            Path segment = SegmentScan.segmentsIn(dir).get(SegmentScan.segmentsIn(dir).size() - 1);
            try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.wrap(new byte[] {'#'}), 40); // inside the first entry's metadata
            }
            assertEquals("/k1", spool.next(SHORT).orElseThrow().request().target());
            assertEquals(1, spool.entries());
            List<Path> kept = Files.list(dir.resolve("corrupt")).toList();
            assertEquals(1, kept.size());
            assertFalse(Files.readAllBytes(kept.get(0)).length == 0);
        }
    }
}
