package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolReader;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.upstream.Backoff;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool is bounded by {@code --spool-max-bytes}. With the only upstream down, the relay accepts until the
 * spool is full and then answers 503 with {@code Retry-After: 5}, writing nothing, so the sender holds its data; the
 * bound is never exceeded, not even by many senders at once; and once the upstream is back, the spool drains and the
 * relay accepts again.
 */
class SpoolBackpressureTest {

    static final long BOUND = 8 * 1024;
    static final int BODY_BYTES = 1024;
    /** Short upstream waits, so a returning upstream is tried again within a test's patience. */
    static final RelayApplication.Tuning FAST = new RelayApplication.Tuning(
            new Backoff(Duration.ofMillis(100), Duration.ofMillis(500), Math::random), Duration.ofSeconds(5),
            Duration.ofSeconds(30), Map.of());


    @TempDir
    Path dir;

    private int upstreamPort;
    private RunningRelay relay;
    private TestUpstream revived;
    private final AtomicInteger counter = new AtomicInteger();

    @BeforeEach
    void startRelayWhoseOnlyUpstreamIsDown() {
        TestUpstream upstream = TestUpstream.start();
        upstreamPort = upstream.port();
        upstream.close(); // its port now refuses connections
        relay = RunningRelay.start(dir, Map.of("MCPD_SPOOL_MAX_BYTES", Long.toString(BOUND),
                "MCPD_UPSTREAMS", "http://127.0.0.1:" + upstreamPort), FAST);
    }

    @AfterEach
    void stop() {
        try {
            relay.close();
        } finally {
            if (revived != null) {
                revived.close();
            }
        }
    }

    private Spool spool() {
        return relay.application().spool();
    }

    /** A 1 KiB body that says which request it is (every one is different, all are the same size). */
    private byte[] nextBody() {
        byte[] body = new byte[BODY_BYTES];
        Arrays.fill(body, (byte) '.');
        byte[] label = String.format("{\"request\":%08d}", counter.incrementAndGet()).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(label, 0, body, 0, label.length);
        return body;
    }

    private HttpResponse<String> post(byte[] body) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private boolean spooledHasBody(byte[] body) {
        return relay.spooled().stream().anyMatch(e -> Arrays.equals(body, e.request().body()));
    }

    /** Posts until the first refusal; returns the bodies that were accepted. */
    private List<byte[]> fillUntilRefused() throws Exception {
        List<byte[]> accepted = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            byte[] body = nextBody();
            HttpResponse<String> answer = post(body);
            if (answer.statusCode() == 503) {
                return accepted;
            }
            assertEquals(202, answer.statusCode(), answer.body());
            accepted.add(body);
        }
        throw new AssertionError("100 requests of " + BODY_BYTES + " bytes never filled a spool of " + BOUND);
    }

    private static long segmentBytes(Path spoolDir) throws IOException {
        try (Stream<Path> files = Files.list(spoolDir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".seg")).mapToLong(f -> f.toFile().length())
                    .sum();
        }
    }

    @Test
    void postsAreAcceptedUntilTheSpoolIsFullThenRefused503WithRetryAfter5AndNothingWritten() throws Exception {
        List<byte[]> accepted = fillUntilRefused();
        assertTrue(accepted.size() >= 5, "a " + BOUND + "-byte spool holds several 1 KiB requests, took "
                + accepted.size());
        long entrySize = spool().bytes() / spool().entries();
        assertTrue(spool().bytes() + entrySize > BOUND, "refused only when one more would not fit: "
                + spool().bytes() + " bytes held, entries of " + entrySize);
        List<SpoolEntry> before = relay.spooled();
        long onDiskBefore = segmentBytes(relay.spoolDir());

        byte[] refusedBody = nextBody();
        HttpResponse<String> refused = post(refusedBody);

        assertEquals(503, refused.statusCode(), refused.body());
        assertEquals(List.of("5"), refused.headers().allValues("Retry-After"));
        assertEquals(1, refused.body().strip().lines().count(), "one line: " + refused.body());
        assertTrue(refused.body().contains("full"), refused.body());
        assertFalse(refused.headers().firstValue("mcpd-relay").isPresent(), "a refusal is not spooled");
        assertFalse(spooledHasBody(refusedBody), "the refused body is not in the spool");
        assertEquals(before.size(), relay.spooled().size());
        assertEquals(onDiskBefore, segmentBytes(relay.spoolDir()), "not a byte written for the refusal");
        assertEquals(accepted.size(), spool().entries());
        assertTrue(spool().bytes() <= BOUND);
        for (byte[] body : accepted) {
            assertTrue(spooledHasBody(body), "every accepted request is still in the spool");
        }
        assertTrue(spool().refusedFull() >= 1);
    }

    @Test
    void otlpRequestsAreRefusedTheSameWayWhenTheSpoolIsFull() throws Exception {
        fillUntilRefused();
        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/traces"))
                .header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(nextBody())).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(503, refused.statusCode(), "an OTLP exporter retries a 503: " + refused.body());
        assertEquals("5", refused.headers().firstValue("Retry-After").orElse(null));
    }

    @Test
    void aDeclaredLengthTooLargeForTheRemainingSpaceIsRefusedBeforeTheBodyIsSent() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertEquals(202, post(nextBody()).statusCode());
        }
        long room = BOUND - spool().bytes();
        assertTrue(room > BODY_BYTES && room < BOUND, "the spool has room left: " + room + " bytes");
        int entriesBefore = relay.spooled().size();
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            // A body of exactly the room left cannot fit (an entry is its body plus metadata). Only the head is
            // sent: an answer that waited for the body would never come.
            String answer = raw.send("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + room + "\r\n\r\n").readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 503 "), answer);
            assertTrue(answer.toLowerCase().contains("\r\nretry-after: 5\r\n"), answer);
            assertTrue(answer.toLowerCase().contains("connection: close"), answer);
            assertTrue(raw.closedByServer(), "the unsent body can never become a next request");
        }
        assertEquals(entriesBefore, relay.spooled().size());
        assertEquals(202, post(nextBody()).statusCode(), "a request that fits is still taken");
    }

    @Test
    void sixtyFourConcurrentSendersNeverMakeTheSpoolExceedItsBound() throws Exception {
        int senders = 64;
        int requestsEach = 5;
        Set<String> acceptedBodies = ConcurrentHashMap.newKeySet();
        AtomicInteger refused = new AtomicInteger();
        List<String> unexpected = new CopyOnWriteArrayList<>();
        AtomicLong highest = new AtomicLong();
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(senders + 1);
        try {
            Future<?> watcher = pool.submit(() -> {
                while (running.get()) {
                    highest.accumulateAndGet(spool().bytes(), Math::max);
                    Thread.onSpinWait();
                }
            });
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> sending = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                sending.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < requestsEach; i++) {
                        byte[] body = nextBody();
                        try {
                            HttpResponse<String> answer = post(body);
                            if (answer.statusCode() == 202) {
                                acceptedBodies.add(new String(body, StandardCharsets.UTF_8));
                            } else if (answer.statusCode() == 503
                                    && "5".equals(answer.headers().firstValue("Retry-After").orElse(null))) {
                                refused.incrementAndGet();
                            } else {
                                unexpected.add(answer.statusCode() + " " + answer.body());
                            }
                        } catch (IOException e) {
                            unexpected.add(e.toString());
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> sender : sending) {
                sender.get(60, TimeUnit.SECONDS);
            }
            running.set(false);
            watcher.get(10, TimeUnit.SECONDS);
        } finally {
            running.set(false);
            pool.shutdownNow();
        }
        highest.accumulateAndGet(spool().bytes(), Math::max);

        assertEquals(List.of(), unexpected, "every request is answered 202 or 503 + Retry-After: 5");
        assertEquals(senders * requestsEach, acceptedBodies.size() + refused.get());
        assertTrue(refused.get() > 0, "the spool filled up");
        assertTrue(highest.get() <= BOUND, "the spool held " + highest.get() + " bytes, bound " + BOUND);
        assertEquals(acceptedBodies.size(), spool().entries());

        SpoolReader.Contents onDisk = SpoolReader.read(relay.spoolDir());
        assertEquals(List.of(), onDisk.damage());
        Set<String> spooledBodies = new HashSet<>();
        onDisk.entries().forEach(e -> spooledBodies.add(new String(e.request().body(), StandardCharsets.UTF_8)));
        assertEquals(acceptedBodies, spooledBodies, "exactly the accepted requests are on disk");
        long stored = segmentBytes(relay.spoolDir());
        assertEquals(spool().bytes(), stored, "nothing delivered yet: the segments hold exactly the waiting entries");
        assertTrue(stored <= BOUND, "on disk the entries take " + stored + " bytes, bound " + BOUND);
    }

    @Test
    void onceTheUpstreamIsBackTheSpoolDrainsAndPostsAreAcceptedAgain() throws Exception {
        List<byte[]> accepted = fillUntilRefused();
        assertEquals(503, post(nextBody()).statusCode(), "still full while the upstream is down");

        revived = TestUpstream.start(upstreamPort);
        await().atMost(PATIENCE).until(() -> spool().entries() == 0);

        Set<String> delivered = new HashSet<>();
        revived.received().forEach(r -> delivered.add(new String(r.body(), StandardCharsets.UTF_8)));
        for (byte[] body : accepted) {
            assertTrue(delivered.contains(new String(body, StandardCharsets.UTF_8)),
                    "every accepted request reached the upstream");
        }
        assertEquals(0, spool().bytes());
        byte[] after = nextBody();
        assertEquals(202, post(after).statusCode(), "room again: accepted");
        await().atMost(PATIENCE).until(() -> revived.received().stream()
                .anyMatch(r -> Arrays.equals(after, r.body())));
    }
}
