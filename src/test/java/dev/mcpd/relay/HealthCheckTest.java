package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.delivery.UpstreamProbe;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.Ports;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Health checks through the real relay and upstreams it checks: probes go to {@code --probe-path} every
 * {@code --probe-interval-seconds} with the health-check user agent; an answer after {@code --probe-timeout-seconds}
 * fails even as a 200; {@code --unhealthy-threshold} failed checks in a row (probes or deliveries) take an upstream
 * out of service and {@code --healthy-threshold} successful ones in a row bring it back; when all are out, delivery
 * goes on (fail open); a {@code Retry-After} wait is never cut short; every change of state is one log line.
 */
class HealthCheckTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final RelayApplication.Tuning TUNING = DeliveryTest.FAST.withConfiguredProbes();
    /**
     * Probes every 400 ms instead of {@code --probe-interval-seconds}, for the tests of what the checks decide rather
     * than when they run: each needs several rounds, and rounds of whole seconds made this the slowest test class.
     */
    static final RelayApplication.Tuning QUICK_PROBES = DeliveryTest.FAST.withProbes(Duration.ofMillis(400),
            DeliveryTest.FAST.upWindow());

    @TempDir
    Path dir;

    static RunningRelay relay(Path dir, Map<String, String> options, TestUpstream... upstreams) {
        return RunningRelay.start(dir, options, TUNING, upstreams);
    }

    /** A relay whose probes run every 400 ms ({@link #QUICK_PROBES}). */
    static RunningRelay quickRelay(Path dir, Map<String, String> options, TestUpstream... upstreams) {
        return RunningRelay.start(dir, options, QUICK_PROBES, upstreams);
    }

    static Map<String, String> options(String... pairs) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            options.put(pairs[i], pairs[i + 1]);
        }
        return options;
    }

    static JsonNode upstream(RunningRelay relay, int order) throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body()).get("upstreams").get(order - 1);
    }

    static boolean inService(RunningRelay relay, int order) throws Exception {
        return upstream(relay, order).get("inService").asBoolean();
    }

    static String post(RunningRelay relay) throws Exception {
        String body = "{\"events\":[{\"id\":\"" + UUID.randomUUID() + "\"}]}";
        assertEquals(202, HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode());
        return body;
    }

    static boolean got(TestUpstream upstream, String body) {
        return upstream.received().stream().anyMatch(r -> new String(r.body(), StandardCharsets.UTF_8).equals(body));
    }

    @Test
    void probesGoToTheProbePathAtTheIntervalWithTheHealthCheckUserAgent() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().probePath("/health/deep");
             RunningRelay relay = relay(dir, options("MCPD_PROBE_PATH", "/health/deep",
                     "MCPD_PROBE_INTERVAL_SECONDS", "2", "MCPD_PROBE_TIMEOUT_SECONDS", "1"), upstream)) {
            await().atMost(PATIENCE).until(() -> upstream.probes().size() >= 4);
            List<TestUpstream.Received> probes = upstream.probes();
            for (TestUpstream.Received probe : probes) {
                assertEquals("/health/deep", probe.uri());
                assertEquals(UpstreamProbe.USER_AGENT, probe.header("User-Agent"));
            }
            assertTrue(UpstreamProbe.USER_AGENT.matches("mcpd-relay-health-check/\\d+\\.\\d+\\.\\d+.*"));
            for (int i = 2; i < probes.size(); i++) { // from the second round on, rounds are one interval apart
                long gap = Duration.between(probes.get(i - 1).at(), probes.get(i).at()).toMillis();
                assertTrue(gap > 1_000 && gap < 3_000, "about 2 s between checks: " + gap + " ms");
            }
        }
    }

    @Test
    void theChecksOfSeveralUpstreamsAreSpreadOverTheInterval() throws Exception {
        try (TestUpstream primary = TestUpstream.start();
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(dir, options("MCPD_PROBE_INTERVAL_SECONDS", "4",
                     "MCPD_PROBE_TIMEOUT_SECONDS", "1"), primary, secondary)) {
            await().atMost(PATIENCE).until(() -> primary.probes().size() >= 3 && secondary.probes().size() >= 3);
            for (int round = 1; round < 3; round++) { // the first round checks every upstream at once
                long apart = Duration.between(primary.probes().get(round).at(), secondary.probes().get(round).at())
                        .toMillis();
                // offsets: the primary within 0–0.75 s of the round, the secondary within 1.5–2.25 s
                assertTrue(apart > 700 && apart < 2_300, "round " + round + ": the secondary's check " + apart
                        + " ms after the primary's");
            }
        }
    }

    @Test
    void a200AfterTheTimeoutFailsAndPastTheThresholdTrafficGoesToTheSecondary() throws Exception {
        try (TestUpstream primary = TestUpstream.start()
                     .probeAnswer(r -> TestUpstream.Answer.ok().after(Duration.ofMillis(1_500)));
             TestUpstream secondary = TestUpstream.start();
             CapturedLog log = new CapturedLog();
             RunningRelay relay = quickRelay(dir, options("MCPD_PROBE_TIMEOUT_SECONDS", "1",
                     "MCPD_UNHEALTHY_THRESHOLD", "2"), primary, secondary)) {
            await().atMost(PATIENCE).until(() -> !inService(relay, 1));
            JsonNode status = upstream(relay, 1);
            assertEquals("failure", status.get("lastCheck").get("result").asText());
            assertTrue(status.get("lastCheck").get("reason").asText().contains("no answer within 1000 ms"),
                    status.toString());
            assertTrue(inService(relay, 2));

            String body = post(relay);
            await().atMost(PATIENCE).until(() -> got(secondary, body));
            assertFalse(got(primary, body), "the primary answers ingest at once, but it is out of service");
            Scrape metrics = Scrape.of(HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            String primaryLabels = "{order=\"1\",upstream=\"" + primary.url().toString().replaceAll("/$", "")
                    + "\"}";
            assertEquals(0, metrics.value("mcpd_relay_upstream_in_service" + primaryLabels).orElseThrow());
            assertTrue(metrics.value("mcpd_relay_health_checks_total{order=\"1\",result=\"failure\",upstream=\""
                    + primary.url().toString().replaceAll("/$", "") + "\"}").orElseThrow() >= 2);
            assertEquals(1, log.events("dev.mcpd.delivery.upstreams", Level.INFO).stream()
                    .filter(e -> e.getFormattedMessage().contains("order=1 out of service after 2 failed checks"))
                    .count(), "one line for the change");
        }
    }

    @Test
    void successesMustComeInARowToBringItBackAndThenTrafficReturns() throws Exception {
        AtomicBoolean alternate = new AtomicBoolean();
        AtomicInteger probeCount = new AtomicInteger();
        try (TestUpstream primary = TestUpstream.start().probeAnswer(r -> {
                 int n = probeCount.incrementAndGet();
                 // failing at first; then, while alternating, fail, succeed, fail, succeed…
                 return !alternate.get() || n % 2 == 1 ? TestUpstream.Answer.status(503) : TestUpstream.Answer.ok();
             });
             TestUpstream secondary = TestUpstream.start();
             CapturedLog log = new CapturedLog();
             RunningRelay relay = quickRelay(dir, options("MCPD_PROBE_TIMEOUT_SECONDS", "1",
                     "MCPD_UNHEALTHY_THRESHOLD", "1", "MCPD_HEALTHY_THRESHOLD", "2"), primary, secondary)) {
            await().atMost(PATIENCE).until(() -> !inService(relay, 1));
            alternate.set(true);
            int from = probeCount.get();
            await().atMost(PATIENCE).until(() -> probeCount.get() >= from + 5);
            assertFalse(inService(relay, 1), "fail, succeed, fail, succeed… never two successes in a row");
            assertTrue(upstream(relay, 1).get("checks").get("successesInARow").asInt() <= 1);

            primary.probeAnswer(r -> TestUpstream.Answer.ok());
            await().atMost(PATIENCE).until(() -> inService(relay, 1));
            Instant back = Instant.now();
            String body = post(relay);
            await().atMost(PATIENCE).until(() -> got(primary, body));
            assertTrue(Duration.between(back, Instant.now()).toMillis() < 2_000,
                    "traffic returns within one interval of coming back");
            List<String> changes = log.events("dev.mcpd.delivery.upstreams", Level.INFO).stream()
                    .map(e -> e.getFormattedMessage()).filter(m -> m.contains("order=1 out of service")
                            || m.contains("order=1 back in service")).toList();
            assertEquals(2, changes.size(), "one line per change: out once, back once: " + changes);
            assertTrue(changes.get(1).contains("back in service after 2 successful checks"), changes.toString());
        }
    }

    @Test
    void deliveryFailuresAloneTakeAnUpstreamOutUnderTraffic() throws Exception {
        try (TestUpstream primary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(dir, options("MCPD_PROBE_INTERVAL_SECONDS", "600",
                     "MCPD_PROBE_TIMEOUT_SECONDS", "1", "MCPD_UNHEALTHY_THRESHOLD", "3"), primary, secondary)) {
            await().atMost(PATIENCE).until(() -> primary.probes().size() == 1); // the first round, then 10 min
            for (int i = 0; i < 20 && inService(relay, 1); i++) {
                String body = post(relay);
                await().atMost(PATIENCE).until(() -> got(secondary, body));
            }
            assertFalse(inService(relay, 1), "failed deliveries are failed checks");
            assertEquals(1, primary.probes().size(), "no probe failed: the deliveries alone did it");
            assertTrue(upstream(relay, 1).get("lastCheck").get("reason").asText().startsWith("delivery"));
        }
    }

    @Test
    void whenEveryUpstreamIsOutOfServiceDeliveryGoesOn() throws Exception {
        try (TestUpstream primary = TestUpstream.start().readyStatus(503);
             TestUpstream secondary = TestUpstream.start().readyStatus(503);
             RunningRelay relay = quickRelay(dir, options("MCPD_PROBE_TIMEOUT_SECONDS", "1",
                     "MCPD_UNHEALTHY_THRESHOLD", "1"), primary, secondary)) {
            await().atMost(PATIENCE).until(() -> !inService(relay, 1) && !inService(relay, 2));
            String body = post(relay);
            await().atMost(PATIENCE).until(() -> got(primary, body));
            assertFalse(got(secondary, body), "fail open, in order: the primary first");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {404, 405, 501})
    void anUpstreamThatDoesNotServeTheProbePathIsCheckedByItsDeliveriesAndStaysUpWhenIdle(int status)
            throws Exception {
        // An OpenTelemetry Collector's OTLP receiver answers GET /readyz with 405.
        try (TestUpstream collector = TestUpstream.start().readyStatus(status);
             CapturedLog log = new CapturedLog();
             RunningRelay relay = quickRelay(dir, options("MCPD_PROBE_TIMEOUT_SECONDS", "1",
                     "MCPD_UNHEALTHY_THRESHOLD", "2"), collector)) {
            await().atMost(PATIENCE).until(() -> collector.probes().size() >= 4);
            JsonNode idle = upstream(relay, 1);
            assertTrue(idle.get("inService").asBoolean(), idle.toString());
            assertEquals("up", idle.get("state").asText(), idle.toString());
            assertEquals("passive", idle.get("checks").get("mode").asText(), idle.toString());
            assertEquals("GET /readyz answered " + status, idle.get("checks").get("passiveBecause").asText());
            assertEquals(0, idle.get("checks").get("failed").asInt(), "its probes are not failed checks: " + idle);
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(relay.uri("/readyz")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertTrue(HTTP.send(HttpRequest.newBuilder(relay.uri("/readyz")).build(),
                    HttpResponse.BodyHandlers.ofString()).body().startsWith("ok"), "not degraded while idle");
            assertEquals(1, log.events("dev.mcpd.delivery", Level.WARN).stream()
                    .filter(e -> e.getFormattedMessage().contains("does not serve its probe (GET /readyz answered "
                            + status + ")")).count(), "said once");

            String body = post(relay);
            await().atMost(PATIENCE).until(() -> got(collector, body));
            assertTrue(upstream(relay, 1).get("checks").get("succeeded").asInt() >= 1, "a delivery is a check");

            collector.answer(r -> TestUpstream.Answer.status(503)); // its deliveries fail: those are checks
            post(relay);
            await().atMost(PATIENCE).until(() -> !inService(relay, 1));

            collector.answer(r -> TestUpstream.Answer.ok()).readyStatus(200); // served again: probes are checks
            await().atMost(PATIENCE).until(() -> "active".equals(upstream(relay, 1).get("checks").get("mode")
                    .asText()));
            await().atMost(PATIENCE).until(() -> inService(relay, 1));
        }
    }

    @Test
    void anUpstreamIsCheckedAtItsOwnProbeAddressAndAnotherNotAtAll() throws Exception {
        // The first upstream's own /readyz would fail; its health answers on another port (a Collector's :13133).
        try (TestUpstream gateway = TestUpstream.start().readyStatus(503);
             TestUpstream healthPort = TestUpstream.start().probePath("/");
             TestUpstream unprobed = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, options(
                     "MCPD_UPSTREAMS", gateway.url() + "," + unprobed.url(),
                     "MCPD_UPSTREAM_PROBES", "1=" + healthPort.url().toString().replaceAll("/$", "") + "/,2=off",
                     "MCPD_PROBE_TIMEOUT_SECONDS", "1", "MCPD_UNHEALTHY_THRESHOLD", "1"), QUICK_PROBES)) {
            await().atMost(PATIENCE).until(() -> healthPort.probes().size() >= 3);
            assertEquals(0, gateway.probes().size(), "the upstream's own --probe-path is not asked");
            assertEquals(0, unprobed.probes().size(), "an upstream with --upstream-probe N=off is never probed");
            JsonNode first = upstream(relay, 1);
            assertTrue(first.get("inService").asBoolean(), first.toString());
            assertEquals("active", first.get("checks").get("mode").asText(), first.toString());
            assertTrue(first.get("checks").get("succeeded").asInt() >= 3, first.toString());
            JsonNode second = upstream(relay, 2);
            assertEquals("passive", second.get("checks").get("mode").asText(), second.toString());
            assertEquals("not probed (--upstream-probe 2=off)", second.get("checks").get("passiveBecause").asText());
            assertEquals("up", second.get("state").asText(), "up while its deliveries do not fail: " + second);
            assertTrue(second.get("inService").asBoolean(), second.toString());

            healthPort.readyStatus(503); // the health port says the gateway is unwell: traffic moves on
            await().atMost(PATIENCE).until(() -> !inService(relay, 1));
            String body = post(relay);
            await().atMost(PATIENCE).until(() -> got(unprobed, body));
            assertFalse(got(gateway, body));
        }
    }

    @Test
    void goodChecksNeverCutARetryAfterWaitShort() throws Exception {
        AtomicBoolean throttled = new AtomicBoolean(true);
        try (TestUpstream primary = TestUpstream.start().answer(r -> throttled.getAndSet(false)
                     ? TestUpstream.Answer.status(429).withHeader("Retry-After", "4") : TestUpstream.Answer.ok());
             TestUpstream secondary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             RunningRelay relay = relay(dir, options("MCPD_PROBE_INTERVAL_SECONDS", "2",
                     "MCPD_PROBE_TIMEOUT_SECONDS", "1", "MCPD_HEALTHY_THRESHOLD", "1"), primary, secondary)) {
            String body = post(relay);
            await().atMost(PATIENCE).until(() -> got(primary, body) && primary.received().size() >= 2);
            List<TestUpstream.Received> sent = primary.received();
            long waited = Duration.between(sent.get(0).at(), sent.get(1).at()).toMillis();
            assertTrue(waited >= 3_900, "the primary's Retry-After of 4 s held although its probes succeeded: "
                    + waited + " ms");
        }
    }

    @Test
    void aCheckOfAnUpstreamNobodyListensAtFailsAsARefusedConnection() throws Exception {
        int closed = Ports.free();
        try (RunningRelay relay = RunningRelay.start(dir, options("MCPD_UPSTREAMS", "http://127.0.0.1:" + closed,
                "MCPD_PROBE_TIMEOUT_SECONDS", "1"), QUICK_PROBES)) {
            await().atMost(PATIENCE).until(() -> upstream(relay, 1).has("lastCheck"));
            JsonNode check = upstream(relay, 1).get("lastCheck");
            assertEquals("failure", check.get("result").asText(), check.toString());
            assertEquals("probe connection refused", check.get("reason").asText(), check.toString());
        }
    }
}
