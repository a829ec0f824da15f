package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.ReliabilityReport;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Upstreams that misbehave. A health check is bounded as a whole, not only its head, and never holds up the checks of
 * the other upstreams; a delivery's whole answer must come within the delivery timeout of the request, and be no
 * larger than the cap, or the entry goes to the next upstream; an upstream that names h2c but speaks HTTP/1.1 is
 * spoken HTTP/1.1.
 */
class MisbehavingUpstreamTest {

    @TempDir
    Path dir;

    private RunningRelay relay(RelayApplication.Tuning tuning, Map<String, String> options, String upstreams) {
        Map<String, String> environment = new HashMap<>(options);
        environment.put("MCPD_UPSTREAMS", upstreams);
        return RunningRelay.start(dir, environment, tuning);
    }

    @Test
    void aCheckWhoseAnswerNeverEndsFailsWithinItsTimeoutAndTheOtherUpstreamsAreStillChecked() throws Exception {
        try (MisbehavingUpstream stuck = MisbehavingUpstream.start(MisbehavingUpstream.Ending.NEVER,
                     MisbehavingUpstream.Ending.AT_ONCE);
             TestUpstream healthy = TestUpstream.start();
             RunningRelay relay = relay(HealthCheckTest.TUNING, HealthCheckTest.options(
                     "MCPD_PROBE_INTERVAL_SECONDS", "2", "MCPD_PROBE_TIMEOUT_SECONDS", "1",
                     "MCPD_UNHEALTHY_THRESHOLD", "2"), stuck.url() + "," + healthy.url())) {
            // Round after round, though the first upstream's answers never end.
            await().atMost(PATIENCE).until(() -> healthy.probes().size() >= 4 && stuck.checksAsked() >= 3);
            await().atMost(PATIENCE).until(() -> !HealthCheckTest.inService(relay, 1));
            JsonNode first = HealthCheckTest.upstream(relay, 1);
            assertEquals("failure", first.get("lastCheck").get("result").asText(), first.toString());
            assertTrue(first.get("lastCheck").get("reason").asText().contains("no answer within 1000 ms"),
                    first.toString());
            JsonNode second = HealthCheckTest.upstream(relay, 2);
            assertTrue(second.get("inService").asBoolean(), second.toString());
            assertEquals("success", second.get("lastCheck").get("result").asText(), second.toString());

            String body = HealthCheckTest.post(relay);
            await().atMost(PATIENCE).until(() -> HealthCheckTest.got(healthy, body));
        }
    }

    @Test
    void anAnswerThatDripsPastTheDeliveryTimeoutIsATimeoutAndTheEntryGoesToTheNextUpstream() throws Exception {
        // DeliveryTest.FAST: a delivery timeout of 1 s; the answer's bytes come every 200 ms, so no pause is that long.
        assertTheEntryGoesToTheNextUpstream(MisbehavingUpstream.Ending.DRIP,
                "no whole answer within 1000 ms of the request");
    }

    @Test
    void anAnswerThatDripsBeforeALargeRequestIsReadIsATimeoutToo() throws Exception {
        // The upstream answers as soon as it has the head, never reads the 12 MiB body and drips its answer: the
        // request is never written whole, and no pause is long enough for the idle timeout. The whole answer is
        // still due within the delivery timeout of its first byte.
        byte[] large = new byte[12 << 20];
        Arrays.fill(large, (byte) 'x');
        try (MisbehavingUpstream first = MisbehavingUpstream.start(MisbehavingUpstream.Ending.AT_ONCE,
                     MisbehavingUpstream.Ending.DRIP_UNREAD);
             TestUpstream healthy = TestUpstream.start();
             CapturedLog log = new CapturedLog();
             RunningRelay relay = relay(DeliveryTest.FAST, Map.of(), first.url() + "," + healthy.url())) {
            assertEquals(200, DeliveryTest.post(relay, "/v1/traces", large, "Content-Type", "application/x-protobuf",
                    "Idempotency-Key", "large"));
            long sent = System.nanoTime();
            await().atMost(PATIENCE).until(() -> healthy.received().stream()
                    .anyMatch(r -> Arrays.equals(r.body(), large)));
            long failedOverMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(first.deliveriesAsked() >= 1, "the first upstream was tried first");
            boolean timedOut = log.events("dev.mcpd.delivery", Level.WARN).stream().anyMatch(e -> e
                    .getFormattedMessage().contains("order=1 state=waiting") && e.getFormattedMessage()
                    .contains("no whole answer"));
            ReliabilityReport.assertHostile("a3-m3", "an upstream that answers a 12 MiB request"
                            + " as soon as it has the head, never reads the body and drips its answer (delivery"
                            + " timeout 1 s)", "a timeout on that upstream; the entry delivered to the next one",
                    "delivered to the next upstream after " + failedOverMillis + " ms; the first "
                            + (timedOut ? "timed out" : "NOT timed out"), timedOut);
        }
    }

    @Test
    void anAnswerLargerThanTheCapFailsRetryablyAndTheEntryGoesToTheNextUpstream() throws Exception {
        assertTheEntryGoesToTheNextUpstream(MisbehavingUpstream.Ending.HUGE, "answer larger than 1024 KiB");
    }

    /** The first upstream answers deliveries so; the entry is delivered once, by the second, and the first waits. */
    private void assertTheEntryGoesToTheNextUpstream(MisbehavingUpstream.Ending deliveries, String cause)
            throws Exception {
        try (MisbehavingUpstream first = MisbehavingUpstream.start(MisbehavingUpstream.Ending.AT_ONCE, deliveries);
             TestUpstream healthy = TestUpstream.start();
             CapturedLog log = new CapturedLog();
             RunningRelay relay = relay(DeliveryTest.FAST, Map.of(), first.url() + "," + healthy.url())) {
            String body = HealthCheckTest.post(relay);
            await().atMost(PATIENCE).until(() -> HealthCheckTest.got(healthy, body));
            assertTrue(first.deliveriesAsked() >= 1, "the first upstream was tried first");
            assertTrue(log.events("dev.mcpd.delivery", Level.WARN).stream().anyMatch(e -> e.getFormattedMessage()
                    .contains("order=1 state=waiting") && e.getFormattedMessage().contains(cause)),
                    "the first upstream waits: " + cause);
            assertEquals(1, healthy.received().size(), "delivered once, by the second upstream");
        }
    }

    @Test
    void anHttp11ProxyThatPassesOnH2cIsSpokenHttp11AfterItRefusesThePrefaceAndTakesTheEntries() throws Exception {
        try (MisbehavingUpstream proxy = MisbehavingUpstream.start(MisbehavingUpstream.Ending.AT_ONCE_NAMING_H2C,
                     MisbehavingUpstream.Ending.AT_ONCE);
             CapturedLog log = new CapturedLog();
             RunningRelay relay = relay(HealthCheckTest.TUNING, HealthCheckTest.options(), proxy.url().toString())) {
            HealthCheckTest.post(relay);
            await().atMost(PATIENCE).until(() -> proxy.deliveriesAsked() == 1);
            assertTrue(proxy.prefacesRefused() >= 1, "told h2c, the relay tried it first");
            int refused = proxy.prefacesRefused();
            HealthCheckTest.post(relay);
            await().atMost(PATIENCE).until(() -> proxy.deliveriesAsked() == 2);
            assertEquals(refused, proxy.prefacesRefused(), "once fallen back, it stays on HTTP/1.1");
            assertEquals(1, log.events("dev.mcpd.delivery", Level.WARN).stream()
                    .filter(e -> e.getFormattedMessage().contains("order=1 refused the HTTP/2 preface")).count(),
                    "the fallback is said once");
            JsonNode upstream = HealthCheckTest.upstream(relay, 1);
            assertEquals("h1", upstream.get("protocol").asText(), upstream.toString());
            await().atMost(PATIENCE).until(() -> HealthCheckTest.upstream(relay, 1).get("delivered").asLong() == 2);
            assertEquals(List.of(), log.events("io.", Level.ERROR).stream().map(e -> e.getLoggerName() + ": "
                    + e.getFormattedMessage()).toList(), "no ERROR of Vert.x's: the relay's WARN names the upstream");
        }
    }
}
