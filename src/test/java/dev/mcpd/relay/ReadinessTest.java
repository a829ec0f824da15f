package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.ReliabilityReport;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** /healthz always answers; /readyz says ok, degraded (still buffering) or unavailable. */
class ReadinessTest {

    /** Probes every 200 ms and a 1 s up window, so states change within a test's patience. */
    static final RelayApplication.Tuning QUICK_PROBES = RelayApplication.Tuning.standard()
            .withProbes(Duration.ofMillis(200), Duration.ofSeconds(1));

    @TempDir
    Path dir;

    private RunningRelay relay(TestUpstream upstream, Map<String, String> extra) {
        Map<String, String> environment = new HashMap<>(extra);
        environment.put("MCPD_UPSTREAMS", upstream.url().toString());
        return RunningRelay.start(dir, environment, QUICK_PROBES);
    }

    private static HttpResponse<String> get(RunningRelay relay, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int post(RunningRelay relay, int bodyBytes) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[bodyBytes])).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void readyzIsOkWhileAnUpstreamAnswersItsProbe() throws Exception {
        try (TestUpstream upstream = TestUpstream.start(); RunningRelay relay = relay(upstream, Map.of())) {
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().equals("ok\n"));
            assertEquals(200, get(relay, "/readyz").statusCode());
            assertEquals(200, get(relay, "/healthz").statusCode());
        }
    }

    @Test
    void readyzTurnsDegradedWhenNoUpstreamAnsweredWithinTheWindowAndStays200() throws Exception {
        TestUpstream upstream = TestUpstream.start();
        try (RunningRelay relay = relay(upstream, Map.of())) {
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().equals("ok\n"));
            upstream.close();
            // Three failed probes 200 ms apart take it out of service, sooner than the 1 s up window ends.
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().startsWith("degraded: ")
                    && get(relay, "/readyz").body().contains(upstream.url() + " out-of-service"));
            HttpResponse<String> degraded = get(relay, "/readyz");
            assertEquals(200, degraded.statusCode(), "a buffering relay keeps its traffic");
            assertEquals(1, degraded.body().strip().lines().count(), "one line");
            assertEquals(202, post(relay, 100), "and it still takes requests");
            assertEquals(200, get(relay, "/healthz").statusCode());
        }
    }

    @Test
    void anUpstreamItsChecksTookOutOfServiceIsNotOkThoughItAnsweredLately() throws Exception {
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", upstream.url().toString()),
                     RelayApplication.Tuning.standard().withProbes(Duration.ofMillis(200), Duration.ofSeconds(30)))) {
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().equals("ok\n"));
            upstream.readyStatus(503);
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().startsWith("degraded: "));
            String body = get(relay, "/readyz").body();
            assertTrue(body.contains(upstream.url() + " out-of-service"), body);
            JsonNode status = HealthCheckTest.upstream(relay, 1);
            assertEquals("out-of-service", status.get("state").asText(), status.toString());
            assertTrue(Instant.parse(status.get("lastUp").asText()).isAfter(Instant.now().minusSeconds(30)),
                    "it answered within the 30 s up window: " + status);
        }
    }

    @Test
    void anUpstreamWhoseReadyzAnswers503IsNotUp() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().readyStatus(503);
             RunningRelay relay = relay(upstream, Map.of())) {
            await().atMost(PATIENCE).until(() -> upstream.probes().size() >= 2);
            assertTrue(get(relay, "/readyz").body().startsWith("degraded: "));
        }
    }

    @Test
    void readyzIs503WithNoUpstreamAndTheSpoolAtLeast80PercentFull() throws Exception {
        try (TestUpstream upstream = TestUpstream.refusing();
             RunningRelay relay = relay(upstream, Map.of("MCPD_SPOOL_MAX_BYTES", "10KiB"))) {
            while (relay.application().spool().bytes() < 8 * 1024) {
                assertEquals(202, post(relay, 500));
            }
            assertTrue(relay.application().spool().bytes() <= 10 * 1024);
            HttpResponse<String> answer = get(relay, "/readyz");
            assertEquals(503, answer.statusCode(), answer.body());
            assertTrue(answer.body().startsWith("unavailable: no upstream reachable and the spool is "),
                    answer.body());
        }
    }

    @Test
    void readyzIs503WhileTheSpoolIsFullEvenWithAnUpstreamUp() throws Exception {
        // The upstream is up (its probe answers) but refuses every delivery, so the spool fills.
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             RunningRelay relay = relay(upstream, Map.of("MCPD_SPOOL_MAX_BYTES", "4KiB"))) {
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().equals("ok\n"));
            int status;
            do {
                status = post(relay, 500);
            } while (status == 202);
            assertEquals(503, status);
            HttpResponse<String> answer = get(relay, "/readyz");
            assertEquals(503, answer.statusCode());
            assertTrue(answer.body().startsWith("unavailable: spool full"), answer.body());
        }
    }

    @Test
    void deadLettersCountAgainstTheSpoolBoundAndAPurgeMakesRoomAgain() throws Exception {
        // Every request refused for good: each one leaves the spool for dead/ at once. Without a bound on dead/, one
        // sender grew it past 21 times the spool's bound in 12 s while /readyz said ok.
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(400));
             RunningRelay relay = relay(upstream, Map.of("MCPD_SPOOL_MAX_BYTES", "64KiB"))) {
            await().atMost(PATIENCE).until(() -> get(relay, "/readyz").body().equals("ok\n"));
            int accepted = 0;
            int status;
            do {
                status = post(relay, 1024);
                if (status == 202) {
                    accepted++;
                    int kept = accepted;
                    await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0
                            && relay.application().deadLetters().census().count() == kept);
                }
            } while (status == 202 && accepted < 500);
            long held = relay.application().deadLetters().census().bytes();
            HttpResponse<String> answer = get(relay, "/readyz");
            ReliabilityReport.assertHostile("a3-m5", "1 KiB requests an upstream refuses for good"
                            + " (400), one after the other, to a relay with --spool-max-bytes 64KiB",
                    "dead/ counts against the bound: refused 503 once it holds it, /readyz says spool full",
                    accepted + " accepted, then " + status + "; dead/ holds " + held + " bytes; /readyz "
                            + answer.statusCode() + " " + answer.body().strip(),
                    status == 503 && accepted >= 20 && held <= 64 * 1024 && held > 48 * 1024
                            && answer.statusCode() == 503 && answer.body().startsWith("unavailable: spool full"));

            for (long seq : relay.application().deadLetters().seqsOnDisk()) {
                relay.application().deadLetters().purge(seq);
            }
            await().atMost(PATIENCE).until(() -> post(relay, 1024) == 202);
        }
    }

    @Test
    void aStoppingRelaySaysWhatStaysInTheSpool() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             CapturedLog log = new CapturedLog()) {
            RunningRelay relay = relay(upstream, Map.of());
            for (int i = 0; i < 3; i++) {
                assertEquals(202, post(relay, 100));
            }
            long bytes = relay.application().spool().bytes();
            relay.close();
            List<String> lines = log.events("dev.mcpd.relay", Level.INFO).stream()
                    .map(e -> e.getFormattedMessage()).filter(l -> l.startsWith("stopped: ")).toList();
            assertEquals(List.of("stopped: 3 entries (" + bytes + " bytes) stay in the spool, delivered after the next"
                    + " start"), lines);
            assertEquals(723, bytes, "docs/operating.md's sample: three requests of 100 bytes as the spool keeps them");
            assertTrue(Files.readString(Path.of("docs/operating.md")).contains("`" + lines.get(0)),
                    "docs/operating.md shows the line as the relay prints it");
        }
    }
}
