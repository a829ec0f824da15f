package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The order entries leave in. Oldest first, always: an entry given back after a failed attempt goes out again before
 * any entry received after it, however many lanes and whatever the window. Ordered streams ({@code --ordered-path},
 * Prometheus remote write by default): one request of a stream at a time, in the order received, through retryable
 * failures, failover and permanent refusals; different streams side by side.
 */
class DeliveryOrderTest {

    private static final String WRITE = "/api/v1/write";

    @TempDir
    Path dir;

    /** What the upstreams saw: each request's entry number and stream, its answer, in arrival order. */
    private record Arrival(int number, String stream, int status, String upstream) {
    }

    private final List<Arrival> arrivals = new CopyOnWriteArrayList<>();

    private static byte[] entry(String stream, int number) {
        return ("{\"stream\":\"" + stream + "\",\"n\":" + number + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static int numberOf(TestUpstream.Received r) {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        return Integer.parseInt(body.substring(body.indexOf("\"n\":") + 4, body.indexOf('}')));
    }

    private static String streamOf(TestUpstream.Received r) {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        int at = body.indexOf("\"stream\":\"") + 10;
        return body.substring(at, body.indexOf('"', at));
    }

    /** An upstream answering {@code answer} for each arrival (null: 200), recording every arrival. */
    private TestUpstream upstream(String name, Function<TestUpstream.Received, Integer> answer) {
        return TestUpstream.start().answer(r -> {
            Integer status = answer.apply(r);
            int given = status == null ? 200 : status;
            arrivals.add(new Arrival(numberOf(r), streamOf(r), given, name));
            return TestUpstream.Answer.status(given).withBody(given == 400 ? "out of order sample" : "");
        });
    }

    /** Entries spooled by a relay with no upstream, so that the next relay finds them all waiting. */
    private void spooled(String path, String stream, int count, String... headers) throws Exception {
        try (RunningRelay down = RunningRelay.start(dir.resolve("relay"), Map.of(), DeliveryTest.FAST)) {
            for (int i = 0; i < count; i++) {
                List<String> all = new ArrayList<>(List.of("Content-Type", "application/x-protobuf",
                        "Content-Encoding", "snappy", "X-Scope-OrgID", stream));
                all.addAll(List.of(headers));
                assertEquals(2, post(down, path, entry(stream, i), all.toArray(String[]::new)) / 100);
            }
        }
    }

    private RunningRelay relayTo(Map<String, String> extra, TestUpstream... upstreams) {
        StringBuilder urls = new StringBuilder();
        for (TestUpstream upstream : upstreams) {
            urls.append(urls.length() == 0 ? "" : ",").append(upstream.url());
        }
        Map<String, String> environment = new HashMap<>(extra);
        environment.put("MCPD_UPSTREAMS", urls.toString());
        return RunningRelay.start(dir.resolve("relay"), environment, DeliveryTest.FAST);
    }

    private List<Integer> delivered(String stream) {
        return arrivals.stream().filter(a -> a.stream().equals(stream) && a.status() / 100 == 2)
                .map(Arrival::number).toList();
    }

    private static List<Integer> upTo(int count) {
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            numbers.add(i);
        }
        return numbers;
    }

    // --- oldest first, for every entry ---------------------------------------------------------------------------

    @ParameterizedTest(name = "--workers {0} --max-in-flight 1")
    @ValueSource(ints = {1, 4})
    void anEntryGivenBackAfterAFailedAttemptIsSentBeforeEveryNewerOne(int workers) throws Exception {
        spooled("/v1/ingest", "plain", 24);
        AtomicInteger failedOnce = new AtomicInteger();
        try (TestUpstream upstream = upstream("u", r -> numberOf(r) == 5 && failedOnce.getAndIncrement() == 0
                ? 503 : null);
             RunningRelay relay = relayTo(Map.of("MCPD_WORKERS", String.valueOf(workers), "MCPD_MAX_IN_FLIGHT",
                     "1"), upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
        }
        int failure = -1;
        for (int i = 0; i < arrivals.size(); i++) {
            if (arrivals.get(i).number() == 5 && arrivals.get(i).status() == 503) {
                failure = i;
            }
        }
        assertTrue(failure >= 0, "entry 5 failed once: " + arrivals);
        Arrival next = arrivals.get(failure + 1);
        assertTrue(next.number() <= 5, "after entry 5 failed, entry " + next.number() + " went before it: "
                + arrivals);
    }

    // --- ordered streams -------------------------------------------------------------------------------------

    @Test
    void anOrderedStreamLeavesOneRequestAtATimeInTheOrderReceived() throws Exception {
        spooled(WRITE, "tenant-a", 30);
        try (TestUpstream upstream = upstream("u", r -> null);
             RunningRelay relay = relayTo(Map.of(), upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(1, upstream.maxConcurrentRequests(), "one request of the stream at a time");
        }
        assertEquals(upTo(30), delivered("tenant-a"));
    }

    @Test
    void aRetryableFailureRetriesThatEntryAndNothingNewerOvertakesIt() throws Exception {
        spooled(WRITE, "tenant-a", 20);
        AtomicInteger failures = new AtomicInteger();
        try (TestUpstream upstream = upstream("u", r -> numberOf(r) == 7 && failures.getAndIncrement() < 2
                ? 503 : null);
             RunningRelay relay = relayTo(Map.of(), upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
        }
        List<Integer> sent = arrivals.stream().map(Arrival::number).toList();
        List<Integer> expected = new ArrayList<>(upTo(20));
        expected.add(7, 7);
        expected.add(7, 7);
        assertEquals(expected, sent, "7 failed twice and went again before 8");
    }

    @Test
    void aFailoverMovesTheStreamWholeAndInOrder() throws Exception {
        spooled(WRITE, "tenant-a", 20);
        try (TestUpstream primary = upstream("primary", r -> numberOf(r) >= 6 ? 503 : null);
             TestUpstream secondary = upstream("secondary", r -> null);
             RunningRelay relay = relayTo(Map.of(), primary, secondary)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
        }
        assertEquals(upTo(20), delivered("tenant-a"));
        assertTrue(arrivals.stream().anyMatch(a -> a.upstream().equals("secondary")), "failed over: " + arrivals);
        for (int i = 1; i < arrivals.size(); i++) {
            assertTrue(arrivals.get(i).number() >= arrivals.get(i - 1).number(), "went back in the stream: "
                    + arrivals);
        }
    }

    @Test
    void aPermanentRefusalGoesToDeadAndTheStreamGoesOn() throws Exception {
        spooled(WRITE, "tenant-a", 15);
        try (TestUpstream upstream = upstream("u", r -> numberOf(r) == 4 ? 400 : null);
             RunningRelay relay = relayTo(Map.of(), upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(1, relay.application().deadLetters().count());
        }
        List<Integer> expected = new ArrayList<>(upTo(15));
        expected.remove(Integer.valueOf(4));
        assertEquals(expected, delivered("tenant-a"));
        assertEquals(upTo(15), arrivals.stream().map(Arrival::number).toList(), "each tried once, in order");
    }

    @Test
    void differentStreamsGoSideBySideEachInItsOwnOrder() throws Exception {
        spooled(WRITE, "tenant-a", 10);
        spooled(WRITE, "tenant-b", 10);
        CountDownLatch bothOut = new CountDownLatch(2);
        Set<String> streamsSeen = ConcurrentHashMap.newKeySet();
        try (TestUpstream upstream = upstream("u", r -> {
            // The first request of each stream is held until the other stream's first arrives too: both out at once.
            if (streamsSeen.add(streamOf(r))) {
                bothOut.countDown();
                try {
                    bothOut.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return null;
        });
             RunningRelay relay = relayTo(Map.of(), upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(0, bothOut.getCount(), "the two streams were out at the same time");
            assertEquals(2, upstream.maxConcurrentRequests(), "one request per stream at a time");
        }
        assertEquals(upTo(10), delivered("tenant-a"));
        assertEquals(upTo(10), delivered("tenant-b"));
    }

    @Test
    void withOrderedPathNoneAStreamIsNotHeldBack() throws Exception {
        spooled(WRITE, "tenant-a", 40);
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.ok()
                .after(Duration.ofMillis(20)));
             RunningRelay relay = relayTo(Map.of("MCPD_ORDERED_PATHS", "none"), upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertTrue(upstream.maxConcurrentRequests() > 1, "unordered: many in flight at once");
        }
    }
}
