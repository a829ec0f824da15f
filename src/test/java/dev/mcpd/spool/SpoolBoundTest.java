package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool is bounded by the bytes its waiting entries occupy as stored. An append that would take it past
 * the bound is refused ({@link SpoolFullException}) and nothing of it is kept; the bound is never exceeded, not even
 * by concurrent appends racing for the last bytes.
 */
class SpoolBoundTest {

    static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    private Path spoolDir() {
        return tmp.resolve("relay");
    }

    /** A request whose stored size depends only on {@code bodyBytes}: targets are all the same length. */
    private static SpoolRequest request(int n, int bodyBytes) {
        String target = String.format("/v1/ingest?n=%06d", n);
        byte[] body = new byte[bodyBytes];
        Arrays.fill(body, (byte) ('a' + n % 26));
        return new SpoolRequest("POST", target, "application/json", "", String.format("key-%06d", n),
                Optional.empty(), 1_700_000_000_000L, body);
    }

    /** The smallest possible request: no metadata at all. */
    private static SpoolRequest bare(int bodyBytes) {
        return new SpoolRequest("", "", "", "", "", Optional.empty(), 0, new byte[bodyBytes]);
    }

    /** What the spool itself says a request occupies: the receipt of the same request in a scratch spool. */
    private long storedSize(SpoolRequest request) throws Exception {
        Path scratch = Files.createTempDirectory(tmp, "scratch");
        try (Spool spool = Spool.open(scratch)) {
            return spool.append(request).get(WAIT.toSeconds(), TimeUnit.SECONDS).storedBytes();
        }
    }

    private static Spool open(Path dir, long maxBytes) throws IOException {
        return Spool.open(dir, new Spool.Options(Spool.DEFAULT_SEGMENT_TARGET_BYTES, maxBytes));
    }

    private static SpoolReceipt accepted(Spool spool, SpoolRequest request) throws Exception {
        return spool.append(request).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private static Throwable refusal(Spool spool, SpoolRequest request) {
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> spool.append(request).get(WAIT.toSeconds(), TimeUnit.SECONDS));
        return failed.getCause();
    }

    /** Bytes of every segment file: no header, so exactly the entries written to them. */
    private static long segmentBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".seg")).mapToLong(f -> f.toFile().length())
                    .sum();
        }
    }

    @Test
    void aFullSpoolRefusesWithSpoolFullExceptionAndKeepsNothingOfTheRequest() throws Exception {
        long size = storedSize(request(0, 1000));
        try (Spool spool = open(spoolDir(), 3 * size + size / 2)) {
            for (int n = 0; n < 3; n++) {
                accepted(spool, request(n, 1000));
            }
            long bytesBefore = spool.bytes();
            long onDiskBefore = segmentBytes(spoolDir());

            Throwable why = refusal(spool, request(3, 1000));

            assertInstanceOf(SpoolFullException.class, why, String.valueOf(why));
            assertEquals(3, spool.entries());
            assertEquals(bytesBefore, spool.bytes());
            assertEquals(3 * size, spool.bytes());
            assertEquals(onDiskBefore, segmentBytes(spoolDir()), "not a byte of the refused request is written");
            SpoolReader.Contents onDisk = SpoolReader.read(spoolDir());
            assertEquals(List.of(), onDisk.damage());
            assertEquals(List.of("/v1/ingest?n=000000", "/v1/ingest?n=000001", "/v1/ingest?n=000002"),
                    onDisk.entries().stream().map(e -> e.request().target()).toList());
        }
        assertEquals(3, SpoolReader.read(spoolDir()).entries().size(), "and after the spool closed, still three");
    }

    @Test
    void anEntryThatFillsTheBoundExactlyIsTakenAndTheNextIsRefused() throws Exception {
        long size = storedSize(request(0, 500));
        try (Spool spool = open(spoolDir(), 2 * size)) {
            accepted(spool, request(0, 500));
            accepted(spool, request(1, 500));
            assertEquals(spool.maxBytes(), spool.bytes(), "the bound is inclusive");
            assertInstanceOf(SpoolFullException.class, refusal(spool, request(2, 500)));
            assertInstanceOf(SpoolFullException.class, refusal(spool, bare(0)), "not even an empty request fits");
        }
    }

    @Test
    void aRequestLargerThanTheWholeBoundIsRefusedEvenWhenTheSpoolIsEmpty() throws Exception {
        try (Spool spool = open(spoolDir(), 4096)) {
            assertInstanceOf(SpoolFullException.class, refusal(spool, request(0, 4096)));
            assertEquals(0, spool.entries());
            assertEquals(0, spool.bytes());
            assertEquals(0, segmentBytes(spoolDir()));
            accepted(spool, request(1, 100));
            assertEquals(1, spool.entries(), "a refusal reserves nothing: a request that fits is still taken");
        }
    }

    @Test
    void refusedFullCountsEveryRefusalAndAcceptedEveryEntryTaken() throws Exception {
        long size = storedSize(request(0, 200));
        try (Spool spool = open(spoolDir(), 2 * size)) {
            accepted(spool, request(0, 200));
            accepted(spool, request(1, 200));
            for (int n = 2; n < 7; n++) {
                refusal(spool, request(n, 200));
            }
            assertEquals(2, spool.accepted());
            assertEquals(5, spool.refusedFull());
        }
    }

    @Test
    void afterDeliveryFreesSpaceTheSpoolAdmitsAgain() throws Exception {
        long size = storedSize(request(0, 800));
        try (Spool spool = open(spoolDir(), 2 * size)) {
            accepted(spool, request(0, 800));
            accepted(spool, request(1, 800));
            assertInstanceOf(SpoolFullException.class, refusal(spool, request(2, 800)));

            SpoolEntry out = spool.next(WAIT).orElseThrow();
            assertInstanceOf(SpoolFullException.class, refusal(spool, request(3, 800)),
                    "an entry being delivered still counts (including those being sent)");

            spool.done(out.seq());
            assertEquals(size, spool.bytes());
            SpoolReceipt again = accepted(spool, request(4, 800));
            assertEquals(size, again.storedBytes());
            assertEquals(2 * size, spool.bytes());
            assertInstanceOf(SpoolFullException.class, refusal(spool, request(5, 800)), "and full again");
        }
        assertEquals(List.of("/v1/ingest?n=000001", "/v1/ingest?n=000004"),
                SpoolReader.read(spoolDir()).entries().stream().map(e -> e.request().target()).toList());
    }

    @Test
    void aReleasedEntryKeepsItsPlaceInTheBound() throws Exception {
        long size = storedSize(request(0, 300));
        try (Spool spool = open(spoolDir(), 2 * size)) {
            accepted(spool, request(0, 300));
            accepted(spool, request(1, 300));
            SpoolEntry out = spool.next(WAIT).orElseThrow();
            spool.release(out.seq());
            assertEquals(2 * size, spool.bytes());
            assertInstanceOf(SpoolFullException.class, refusal(spool, request(2, 300)));
        }
    }

    @Test
    void theBoundHoldsAcrossARestartWithEntriesStillWaiting() throws Exception {
        long size = storedSize(request(0, 700));
        try (Spool spool = open(spoolDir(), 2 * size)) {
            accepted(spool, request(0, 700));
            accepted(spool, request(1, 700));
        }
        try (Spool reopened = open(spoolDir(), 2 * size)) {
            assertEquals(2 * size, reopened.bytes());
            assertInstanceOf(SpoolFullException.class, refusal(reopened, request(2, 700)),
                    "what the previous run left counts against the bound");
        }
    }

    @Test
    void admitsSaysNoExactlyWhenABodyOfThatSizeCouldNotFit() throws Exception {
        long minimal = storedSize(bare(0));
        long size = storedSize(request(0, 1000));
        long bound = 3 * size + 1234;
        try (Spool spool = open(spoolDir(), bound)) {
            accepted(spool, request(0, 1000));
            accepted(spool, request(1, 1000));
            long room = bound - spool.bytes();
            long largestBody = room - minimal;

            assertTrue(spool.admits(0));
            assertTrue(spool.admits(largestBody), "a body of " + largestBody + " bytes fits in " + room);
            long refusedBefore = spool.refusedFull();
            assertFalse(spool.admits(largestBody + 1), "a body of " + (largestBody + 1) + " cannot fit in " + room);
            assertEquals(refusedBefore + 1, spool.refusedFull(), "a no counts as a refusal");
            assertEquals(2 * size, spool.bytes(), "asking reserves nothing");

            // The answers agree with what an append does: the largest admitted body fits exactly…
            assertInstanceOf(SpoolFullException.class, refusal(spool, bare((int) largestBody + 1)));
            SpoolReceipt exact = accepted(spool, bare((int) largestBody));
            assertEquals(room, exact.storedBytes());
            assertEquals(bound, spool.bytes());
            // …and then nothing, not even an empty body, is admitted.
            assertFalse(spool.admits(0));
        }
    }

    @Test
    void aBodySizeNearTheLargestLongIsNotAdmittedByAnOverflow() throws Exception {
        // A sender may declare any Content-Length a long holds; the early check must not wrap around to "fits".
        try (Spool spool = open(spoolDir(), 64 * 1024)) {
            accepted(spool, request(0, 10));
            assertFalse(spool.admits(Long.MAX_VALUE), "Content-Length: " + Long.MAX_VALUE);
            assertFalse(spool.admits(Long.MAX_VALUE - 64), "Content-Length: " + (Long.MAX_VALUE - 64));
        }
    }

    @Test
    void sixtyFourConcurrentAppendersNeverTakeTheSpoolPastItsBound() throws Exception {
        int threads = 64;
        int appendsEach = 40;
        long bound = 64 * 1024;
        Random sizes = new Random(42);
        int[][] bodySizes = new int[threads][appendsEach];
        for (int[] row : bodySizes) {
            for (int i = 0; i < appendsEach; i++) {
                row[i] = sizes.nextInt(3000);
            }
        }
        long largestEntry = storedSize(request(0, 3000));

        List<SpoolReceipt> receipts = Collections.synchronizedList(new ArrayList<>());
        AtomicLong refused = new AtomicLong();
        AtomicLong highest = new AtomicLong();
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        try (Spool spool = open(spoolDir(), bound)) {
            Future<?> watcher = watchHighest(pool, spool, running, highest);
            appendTogether(pool, threads, thread -> {
                List<CompletableFuture<SpoolReceipt>> mine = new ArrayList<>();
                for (int i = 0; i < appendsEach; i++) {
                    mine.add(spool.append(request(thread * appendsEach + i, bodySizes[thread][i])));
                }
                for (CompletableFuture<SpoolReceipt> receipt : mine) {
                    try {
                        receipts.add(receipt.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                    } catch (ExecutionException e) {
                        assertInstanceOf(SpoolFullException.class, e.getCause());
                        refused.incrementAndGet();
                    }
                }
            });
            running.set(false);
            watcher.get(10, TimeUnit.SECONDS);
            highest.accumulateAndGet(spool.bytes(), Math::max);

            long receiptBytes = receipts.stream().mapToLong(SpoolReceipt::storedBytes).sum();
            assertTrue(highest.get() <= bound, "bytes() reached " + highest.get() + " > bound " + bound);
            assertTrue(receiptBytes <= bound, "the acknowledged entries hold " + receiptBytes + " > " + bound);
            assertEquals(receiptBytes, spool.bytes());
            assertEquals((long) threads * appendsEach, receipts.size() + refused.get(), "every attempt answered");
            assertEquals(receipts.size(), spool.accepted());
            assertEquals(refused.get(), spool.refusedFull());
            assertEquals(receipts.size(), spool.entries());
            assertTrue(refused.get() > 0, "the bound was reached");
            assertTrue(spool.bytes() > bound - largestEntry, "nothing was refused while it would have fit: "
                    + spool.bytes() + " bytes of " + bound + " held, largest entry " + largestEntry);
        } finally {
            running.set(false);
            pool.shutdownNow();
        }
        SpoolReader.Contents onDisk = SpoolReader.read(spoolDir());
        assertEquals(List.of(), onDisk.damage());
        assertEquals(receipts.size(), onDisk.entries().size());
        Set<Long> acknowledged = new HashSet<>();
        receipts.forEach(r -> acknowledged.add(r.seq()));
        assertEquals(acknowledged, new HashSet<>(onDisk.entries().stream().map(SpoolEntry::seq).toList()));
        assertTrue(segmentBytes(spoolDir()) <= bound, "on disk: " + segmentBytes(spoolDir()) + " > " + bound);
    }

    @Test
    void appendersRacingForTheLastRoomNeverAllGetIt() throws Exception {
        // Round after round, 64 appends start together when there is room for exactly one more entry: one gets it,
        // every other is refused. Two that both passed a check before either reserved would overshoot the bound.
        int threads = 64;
        int rounds = 100;
        long size = storedSize(request(0, 200));
        long prefill = 4;
        long bound = (prefill + 1) * size + size / 2;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Spool spool = open(spoolDir(), bound)) {
            for (int n = 0; n < prefill; n++) {
                accepted(spool, request(n, 200));
            }
            for (int round = 0; round < rounds; round++) {
                CyclicBarrier go = new CyclicBarrier(threads);
                List<Future<Boolean>> appenders = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int n = 1000 + round * threads + t;
                    appenders.add(pool.submit(() -> {
                        go.await();
                        try {
                            spool.append(request(n, 200)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                            return true;
                        } catch (ExecutionException e) {
                            assertInstanceOf(SpoolFullException.class, e.getCause());
                            return false;
                        }
                    }));
                }
                int taken = 0;
                for (Future<Boolean> appender : appenders) {
                    taken += appender.get(30, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertEquals(1, taken, "round " + round + ": room for one, " + taken + " taken; spool holds "
                        + spool.bytes() + " of " + bound + " bytes");
                assertTrue(spool.bytes() <= bound, "round " + round + ": " + spool.bytes() + " > " + bound);
                // Give the room back: deliver the newest entry (everything older stays, handed out and released).
                List<SpoolEntry> out = new ArrayList<>();
                for (int i = 0; i <= prefill; i++) {
                    out.add(spool.next(WAIT).orElseThrow());
                }
                for (int i = 0; i < prefill; i++) {
                    spool.release(out.get(i).seq());
                }
                spool.done(out.get((int) prefill).seq());
                assertEquals(prefill * size, spool.bytes());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentAppendersAndADeliveryFreeingSpaceNeverTakeTheSpoolPastItsBound() throws Exception {
        int threads = 64;
        int appendsEach = 50;
        long bound = 16 * 1024;
        AtomicLong acceptedCount = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong delivered = new AtomicLong();
        AtomicLong highest = new AtomicLong();
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
        try (Spool spool = open(spoolDir(), bound)) {
            Future<?> watcher = watchHighest(pool, spool, running, highest);
            Future<?> delivery = pool.submit(() -> {
                while (running.get()) {
                    Optional<SpoolEntry> out = spool.next(Duration.ofMillis(20));
                    if (out.isPresent()) {
                        spool.done(out.get().seq());
                        delivered.incrementAndGet();
                    }
                }
                return null;
            });
            appendTogether(pool, threads, thread -> {
                for (int i = 0; i < appendsEach; i++) {
                    try {
                        spool.append(request(thread * appendsEach + i, 1024)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                        acceptedCount.incrementAndGet();
                    } catch (ExecutionException e) {
                        assertInstanceOf(SpoolFullException.class, e.getCause());
                        refused.incrementAndGet();
                    }
                }
            });
            running.set(false);
            watcher.get(10, TimeUnit.SECONDS);
            delivery.get(10, TimeUnit.SECONDS);

            assertTrue(highest.get() <= bound, "bytes() reached " + highest.get() + " > bound " + bound);
            assertEquals((long) threads * appendsEach, acceptedCount.get() + refused.get());
            assertEquals(acceptedCount.get(), spool.accepted());
            assertEquals(refused.get(), spool.refusedFull());
            assertEquals(acceptedCount.get() - delivered.get(), spool.entries());
            assertTrue(delivered.get() > 0, "delivery freed space during the run");
        } finally {
            running.set(false);
            pool.shutdownNow();
        }
        assertEquals(List.of(), SpoolReader.read(spoolDir()).damage());
    }

    @Test
    void aRefusedRequestsBodyIsNowhereInTheSpoolFiles() throws Exception {
        long size = storedSize(request(0, 100));
        try (Spool spool = open(spoolDir(), size)) {
            accepted(spool, request(0, 100));
            SpoolRequest refusedRequest = new SpoolRequest("POST", "/refused", "text/plain", "", "refused-key",
                    Optional.of(new Credential("Authorization", "Bearer refused-sender")), 0,
                    "REFUSED-BODY-MARKER".getBytes(StandardCharsets.UTF_8));
            assertInstanceOf(SpoolFullException.class, refusal(spool, refusedRequest));
        }
        try (Stream<Path> files = Files.walk(spoolDir())) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String content = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
                assertFalse(content.contains("REFUSED-BODY-MARKER") || content.contains("refused-sender"),
                        file + " holds part of the refused request");
            }
        }
    }

    /** What each appender thread does; {@code thread} is its number. */
    @FunctionalInterface
    private interface Appender {
        void run(int thread) throws Exception;
    }

    /** Starts {@code threads} appenders at the same instant and waits for all of them. */
    private static void appendTogether(ExecutorService pool, int threads, Appender appender) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            running.add(pool.submit(() -> {
                go.await();
                appender.run(thread);
                return null;
            }));
        }
        go.countDown();
        for (Future<?> one : running) {
            one.get(60, TimeUnit.SECONDS);
        }
    }

    /** Records the highest {@code bytes()} seen until {@code running} turns false. */
    private static Future<?> watchHighest(ExecutorService pool, Spool spool, AtomicBoolean running,
                                          AtomicLong highest) {
        return pool.submit(() -> {
            while (running.get()) {
                highest.accumulateAndGet(spool.bytes(), Math::max);
                Thread.onSpinWait();
            }
        });
    }
}
