package dev.mcpd.relay;

import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.wire.DerivedIdempotencyKey;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Delivery to real HTTP upstreams — failover, waits, failback, dead letters, keys, workers. */
class DeliveryTest {

    /** Short backoff and a 1 s read timeout, so waits and timeouts happen within a test's patience. */
    static final RelayApplication.Tuning FAST = new RelayApplication.Tuning(
            new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), Math::random), Duration.ofSeconds(5),
            Duration.ofSeconds(30), Map.of("mcpd.delivery.timeout-ms", "1000"));

    @TempDir
    Path dir;

    private RunningRelay relay(Map<String, String> extra, TestUpstream... upstreams) {
        return RunningRelay.start(dir, extra, FAST, upstreams);
    }

    private RunningRelay relay(TestUpstream... upstreams) {
        return relay(Map.of(), upstreams);
    }

    /** A POST to the relay with these headers (name, value, …); its status. */
    static int post(RunningRelay relay, String path, byte[] body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri(path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static byte[] unique() {
        return ("{\"events\":[{\"id\":\"" + UUID.randomUUID() + "\"}]}").getBytes(StandardCharsets.UTF_8);
    }

    private static void awaitSpoolEmpty(RunningRelay relay) {
        await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
    }

    @Test
    void theStoredBytesAndHeadersGoToThePrimaryUnchanged() throws Exception {
        try (TestUpstream primary = TestUpstream.start(); TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(primary, secondary)) {
            byte[] body = gzip("a protobuf export, compressed by the sender".getBytes(StandardCharsets.UTF_8));
            assertEquals(200, post(relay, "/v1/traces?tenant=a", body, "Content-Type", "application/x-protobuf",
                    "Content-Encoding", "gzip", "Authorization", "Bearer sender-token", "X-Custom", "not-forwarded",
                    "Keep-Alive", "timeout=5"));
            await().atMost(PATIENCE).until(() -> primary.received().size() == 1);
            TestUpstream.Received got = primary.received().get(0);
            assertEquals("POST", got.method());
            assertEquals("/v1/traces?tenant=a", got.uri());
            assertArrayEquals(body, got.body(), "the gzip body is forwarded as stored, not re-compressed");
            assertEquals("application/x-protobuf", got.header("Content-Type"));
            assertEquals("gzip", got.header("Content-Encoding"));
            assertEquals(DerivedIdempotencyKey.of("/v1/traces?tenant=a", "gzip", body), got.header("Idempotency-Key"));
            assertEquals("Bearer sender-token", got.header("Authorization"), "the sender's key is passed on");
            assertNull(got.header("X-Custom"));
            assertNull(got.header("Keep-Alive"));
            got.headers().keySet().forEach(name -> assertFalse(name.toLowerCase().startsWith("camel"), name));
            assertFalse(got.headers().keySet().stream().anyMatch(n -> n.equalsIgnoreCase("mcpd.entry")));
            awaitSpoolEmpty(relay);
            assertEquals(List.of(), secondary.received());
        }
    }

    @Test
    void anUnusualContentTypeIsForwardedCharacterForCharacter() throws Exception {
        try (TestUpstream upstream = TestUpstream.start(); RunningRelay relay = relay(upstream)) {
            String contentType = "multipart/form-data;boundary=\"--x y\";charset=UTF-8";
            post(relay, "/v1/ingest", unique(), "Content-Type", contentType);
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 1);
            assertEquals(contentType, upstream.received().get(0).header("Content-Type"));
        }
    }

    @Test
    void theRelaysOwnUpstreamKeyReplacesTheSendersCredential() throws Exception {
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = relay(Map.of("MCPD_UPSTREAM_KEY", "relay-key"), upstream)) {
            post(relay, "/v1/ingest", unique(), "Content-Type", "application/json", "x-mcpd-key", "sender-key");
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 1);
            assertEquals("Bearer relay-key", upstream.received().get(0).header("Authorization"));
            assertNull(upstream.received().get(0).header("x-mcpd-key"));
        }
    }

    @Test
    void aSendersOwnIdempotencyKeyIsForwarded() throws Exception {
        try (TestUpstream upstream = TestUpstream.start(); RunningRelay relay = relay(upstream)) {
            post(relay, "/v1/ingest", unique(), "Idempotency-Key", "sender-batch-7");
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 1);
            assertEquals("sender-batch-7", upstream.received().get(0).header("Idempotency-Key"));
        }
    }

    @Test
    void aRefusedConnectionMovesTheRequestToTheNextUpstreamAtOnce() throws Exception {
        try (TestUpstream down = TestUpstream.refusing(); TestUpstream secondary = TestUpstream.start(); RunningRelay relay = relay(down, secondary)) {
            byte[] body = unique();
            post(relay, "/v1/ingest", body);
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            assertArrayEquals(body, secondary.received().get(0).body());
            awaitSpoolEmpty(relay);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {503, 429, 500, 408})
    void eachRetryableStatusMovesTheRequestToTheNextUpstream(int status) throws Exception {
        try (TestUpstream primary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(status));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(primary, secondary)) {
            byte[] body = unique();
            post(relay, "/v1/ingest", body);
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            assertArrayEquals(body, secondary.received().get(0).body(), "after " + status);
            assertEquals(1, primary.received().size(), "one attempt at the primary after " + status);
            awaitSpoolEmpty(relay);
        }
    }

    @Test
    void aTimeoutMovesTheRequestToTheNextUpstreamAndTheKeyMarksBothCopies() throws Exception {
        try (TestUpstream slow = TestUpstream.start()
                     .answer(r -> TestUpstream.Answer.ok().after(Duration.ofSeconds(3)));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(slow, secondary)) {
            post(relay, "/v1/ingest", unique());
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            assertEquals(1, slow.received().size());
            assertEquals(slow.received().get(0).header("Idempotency-Key"),
                    secondary.received().get(0).header("Idempotency-Key"),
                    "a re-send carries the same key, so the collector counts it once");
            awaitSpoolEmpty(relay);
        }
    }

    @Test
    void noAttemptReachesAnUpstreamBeforeItsRetryAfterInSecondsEnds() throws Exception {
        AtomicInteger primaryCalls = new AtomicInteger();
        try (TestUpstream primary = TestUpstream.start().answer(r -> primaryCalls.incrementAndGet() == 1
                     ? TestUpstream.Answer.status(503).withHeader("Retry-After", "2")
                     : TestUpstream.Answer.ok());
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(primary, secondary)) {
            post(relay, "/v1/ingest", unique());
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            Instant refusedAt = primary.received().get(0).at();
            // While the primary waits, every new request goes straight to the secondary.
            for (int i = 0; i < 5; i++) {
                post(relay, "/v1/ingest", unique());
            }
            await().atMost(PATIENCE).until(() -> secondary.received().size() + primary.received().size() == 7);
            // After the wait, traffic returns to the primary by itself.
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> {
                post(relay, "/v1/ingest", unique());
                return primary.received().size() >= 2;
            });
            Instant retriedAt = primary.received().get(1).at();
            assertTrue(!retriedAt.isBefore(refusedAt.plusMillis(1900)),
                    "the primary's next attempt came " + Duration.between(refusedAt, retriedAt).toMillis()
                            + " ms after its Retry-After: 2");
            assertTrue(secondary.received().size() >= 6);
        }
    }

    @Test
    void aRetryAfterHttpDateIsHonoured() throws Exception {
        AtomicInteger primaryCalls = new AtomicInteger();
        try (TestUpstream primary = TestUpstream.start().answer(r -> primaryCalls.incrementAndGet() == 1
                     ? TestUpstream.Answer.status(429).withHeader("Retry-After", DateTimeFormatter.RFC_1123_DATE_TIME
                             .format(Instant.now().plusSeconds(3).atOffset(ZoneOffset.UTC)))
                     : TestUpstream.Answer.ok());
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(primary, secondary)) {
            post(relay, "/v1/ingest", unique());
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            Instant refusedAt = primary.received().get(0).at();
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> {
                post(relay, "/v1/ingest", unique());
                return primary.received().size() >= 2;
            });
            long waited = Duration.between(refusedAt, primary.received().get(1).at()).toMillis();
            // An HTTP-date has whole seconds: the wait ends between 2 and 3 s after the refusal.
            assertTrue(waited >= 1900, "waited only " + waited + " ms");
        }
    }

    @Test
    void whenEveryUpstreamWaitsRequestsWaitAndAreAllDeliveredNoneDead() throws Exception {
        Instant recovers = Instant.now().plusSeconds(3);
        // The keys each upstream answered 2xx, decided where the answer is chosen (not by arrival time, which can
        // fall a moment before the answer is chosen).
        Set<String> accepted = ConcurrentHashMap.newKeySet();
        Function<Integer, Function<TestUpstream.Received, TestUpstream.Answer>> refusingUntilRecovered = status ->
                r -> {
                    if (Instant.now().isBefore(recovers)) {
                        return TestUpstream.Answer.status(status);
                    }
                    accepted.add(r.header("Idempotency-Key"));
                    return TestUpstream.Answer.ok();
                };
        try (TestUpstream primary = TestUpstream.start().answer(refusingUntilRecovered.apply(503));
             TestUpstream secondary = TestUpstream.start().answer(refusingUntilRecovered.apply(502));
             RunningRelay relay = relay(primary, secondary)) {
            for (int i = 0; i < 20; i++) {
                assertEquals(202, post(relay, "/v1/ingest", unique()));
            }
            awaitSpoolEmpty(relay);
            assertEquals(20, accepted.size());
            assertEquals(0, relay.application().deadLetters().count());
        }
    }

    @Test
    void aPermanentRefusalGoesToDeadWithWhyAndNeverToTheSecondary() throws Exception {
        try (TestUpstream primary = TestUpstream.start()
                     .answer(r -> TestUpstream.Answer.status(400).withBody("events must be an array"));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(primary, secondary)) {
            byte[] body = unique();
            post(relay, "/v1/ingest", body, "Content-Type", "application/json", "Authorization", "Bearer s");
            await().atMost(PATIENCE).until(() -> relay.application().deadLetters().count() == 1);
            awaitSpoolEmpty(relay);
            assertEquals(List.of(), secondary.received());
            Path deadDir = relay.spoolDir().resolve("dead");
            Path sidecar = Files.list(deadDir).filter(f -> f.toString().endsWith(".json")).findFirst().orElseThrow();
            JsonNode why = new ObjectMapper().readTree(sidecar.toFile());
            assertEquals(400, why.get("status").asInt());
            assertEquals("events must be an array", why.get("answer").asText());
            assertEquals(primary.url().toString(), why.get("upstream").asText());
            assertEquals("/v1/ingest", why.get("target").asText());
            assertArrayEquals(body, relay.application().deadLetters().entries().get(0).request().body());
            assertEquals("Bearer s",
                    relay.application().deadLetters().entries().get(0).request().credential().orElseThrow().value());
        }
    }

    @Test
    void theDeadLetterLineSaysTheReceiversReasonItsFirstLineEscaped() throws Exception {
        try (CapturedLog log = new CapturedLog();
             TestUpstream primary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(400)
                     .withBody("out of order sample\u001b[31m for series up\nsecond line"));
             RunningRelay relay = relay(primary)) {
            post(relay, "/v1/ingest", unique(), "Content-Type", "application/json");
            await().atMost(PATIENCE).until(() -> relay.application().deadLetters().count() == 1);
            await().atMost(PATIENCE).until(() -> !log.events("dev.mcpd.delivery.dead", Level.WARN)
                    .isEmpty());
            String line = log.events("dev.mcpd.delivery.dead", Level.WARN).get(0).getFormattedMessage();
            assertTrue(line.contains(" answer=\"out of order sample\\x1b[31m for series up\" "), line);
            assertEquals(1, line.lines().count(), line);
        }
    }

    @Test
    void a401ToTheRelaysOwnKeyIsRetriedAndNeverDeadLettered() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (TestUpstream upstream = TestUpstream.start().answer(r -> calls.incrementAndGet() <= 3
                     ? TestUpstream.Answer.status(401) : TestUpstream.Answer.ok());
             RunningRelay relay = relay(Map.of("MCPD_UPSTREAM_KEY", "wrong-then-fixed"), upstream)) {
            post(relay, "/v1/ingest", unique());
            awaitSpoolEmpty(relay);
            assertEquals(4, upstream.received().size(), "three 401s retried, then delivered");
            assertEquals(0, relay.application().deadLetters().count());
        }
    }

    @Test
    void a401WithoutTheRelaysOwnKeyIsTheSendersAndGoesToDead() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(401));
             RunningRelay relay = relay(upstream)) {
            post(relay, "/v1/ingest", unique(), "Authorization", "Bearer revoked");
            await().atMost(PATIENCE).until(() -> relay.application().deadLetters().count() == 1);
            assertEquals(1, upstream.received().size());
        }
    }

    @Test
    void anOtlpPartialSuccessIsDeliveredNotRetried() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.ok()
                .withHeader("Content-Type", "application/json")
                .withBody("{\"partialSuccess\":{\"rejectedSpans\":\"2\",\"errorMessage\":\"bad spans\"}}"));
             RunningRelay relay = relay(upstream)) {
            post(relay, "/v1/traces", "{}".getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json");
            awaitSpoolEmpty(relay);
            assertEquals(1, upstream.received().size());
        }
    }

    @Test
    void entriesSpooledWhileTheUpstreamWasDownAreDeliveredAfterARestart() throws Exception {
        TestUpstream later = TestUpstream.start();
        int port = later.port();
        later.close();
        try (RunningRelay relay = relay(later)) {
            for (int i = 0; i < 5; i++) {
                post(relay, "/v1/ingest/" + i, unique());
            }
            assertEquals(5, relay.application().spool().entries());
        }
        try (TestUpstream upstream = TestUpstream.start(port); RunningRelay relay = relay(upstream)) {
            awaitSpoolEmpty(relay);
            assertEquals(5, upstream.received().stream().map(TestUpstream.Received::uri).distinct().count());
        }
    }

    @Test
    void stoppingLetsDeliveriesInFlightFinishAndLeavesTheRestInTheSpool() throws Exception {
        // Slow, but within the relay's 1 s read timeout: these deliveries are in flight, not failing.
        try (TestUpstream slow = TestUpstream.start()
                .answer(r -> TestUpstream.Answer.ok().after(Duration.ofMillis(700)))) {
            RunningRelay relay = relay(Map.of("MCPD_MAX_IN_FLIGHT", "4"), slow);
            for (int i = 0; i < 10; i++) {
                post(relay, "/v1/ingest/" + i, unique());
            }
            await().atMost(PATIENCE).until(() -> slow.received().size() == 4); // a window of four in flight
            relay.close();
            // Each request the upstream got was answered before the relay stopped, so it left the spool; every
            // other one is still there. Nothing is both (lost in-flight work) and nothing is neither (lost).
            List<String> stillSpooled = relay.spooled().stream().map(e -> e.request().target()).toList();
            List<String> delivered = slow.received().stream().map(TestUpstream.Received::uri).toList();
            assertEquals(10, stillSpooled.size() + delivered.size(), stillSpooled + " + " + delivered);
            assertTrue(stillSpooled.stream().noneMatch(delivered::contains));
        }
    }

    @Test
    void aSlowUpstreamGetsAWindowInFlightNotOneRequestPerWorker() throws Exception {
        try (TestUpstream slow = TestUpstream.start()
                     .answer(r -> TestUpstream.Answer.ok().after(Duration.ofMillis(250)));
             RunningRelay relay = relay(slow)) {
            List<CompletableFuture<HttpResponse<Void>>> posts = new ArrayList<>();
            for (int i = 0; i < 240; i++) {
                posts.add(HTTP.sendAsync(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                        .POST(HttpRequest.BodyPublishers.ofByteArray(unique())).build(),
                        HttpResponse.BodyHandlers.discarding()));
            }
            posts.forEach(post -> assertEquals(202, post.join().statusCode()));
            // Four workers waiting a round trip each would need 240 × 250 ms / 4 = 15 s.
            await().atMost(Duration.ofSeconds(10)).until(() -> slow.received().size() == 240);
            assertTrue(slow.maxConcurrentRequests() > 4 * 4,
                    "far more in flight than --workers: " + slow.maxConcurrentRequests());
            awaitSpoolEmpty(relay);
        }
    }
}
