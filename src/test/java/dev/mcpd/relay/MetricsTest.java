package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.ReliabilityReport;
import java.io.IOException;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every relay metric, with its type and labels, moving when its event happens. */
class MetricsTest {

    static final RelayApplication.Tuning QUICK = DeliveryTest.FAST
            .withProbes(Duration.ofMillis(200), Duration.ofSeconds(30));

    @TempDir
    Path dir;

    private RunningRelay relay(Map<String, String> extra, TestUpstream... upstreams) {
        return RunningRelay.start(dir, extra, QUICK, upstreams);
    }

    private static Scrape scrape(RunningRelay relay) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode());
        assertTrue(answer.headers().firstValue("content-type").orElseThrow().startsWith("text/plain"));
        return Scrape.of(answer.body());
    }

    private static int post(RunningRelay relay, int bodyBytes) throws Exception {
        byte[] body = (UUID.randomUUID() + "x".repeat(Math.max(0, bodyBytes - 36))).getBytes(StandardCharsets.UTF_8);
        return HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void everySpecMetricIsExportedWithItsTypeLabelsAndHelp() throws Exception {
        try (TestUpstream primary = TestUpstream.start(); TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(Map.of(), primary, secondary)) {
            post(relay, 100);
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            Scrape scrape = scrape(relay);
            Map<String, String> expected = Map.ofEntries(
                    Map.entry("mcpd_relay_accepted_total", "counter"),
                    Map.entry("mcpd_relay_refused_full_total", "counter"),
                    Map.entry("mcpd_relay_failovers_total", "counter"),
                    Map.entry("mcpd_relay_dead_letter_total", "counter"),
                    Map.entry("mcpd_relay_spool_entries", "gauge"),
                    Map.entry("mcpd_relay_spool_bytes", "gauge"),
                    Map.entry("mcpd_relay_spool_oldest_seconds", "gauge"),
                    Map.entry("mcpd_relay_spool_out_for_delivery", "gauge"),
                    Map.entry("mcpd_relay_upstream_requests_total", "counter"),
                    Map.entry("mcpd_relay_delivered_total", "counter"),
                    Map.entry("mcpd_relay_failed_attempts_total", "counter"),
                    Map.entry("mcpd_relay_upstream_up", "gauge"),
                    Map.entry("mcpd_relay_upstream_window", "gauge"),
                    Map.entry("mcpd_relay_upstream_in_flight", "gauge"),
                    Map.entry("mcpd_uptime_seconds", "gauge"));
            expected.forEach((name, type) -> {
                assertEquals(type, scrape.types().get(name), name + " has type " + type);
                assertTrue(scrape.helps().getOrDefault(name, "").length() > 10, name + " has a HELP text");
            });
            for (String family : List.of("mcpd_relay_delivered_total", "mcpd_relay_failed_attempts_total",
                    "mcpd_relay_upstream_up", "mcpd_relay_upstream_window", "mcpd_relay_upstream_in_flight")) {
                assertTrue(scrape.value(Scrape.upstreamSample(family, 1, primary.url().toString())).isPresent(), family);
                assertTrue(scrape.value(Scrape.upstreamSample(family, 2, secondary.url().toString())).isPresent(),
                        family);
            }
            assertEquals(1.0, scrape.value("mcpd_relay_accepted_total").orElseThrow());
            assertEquals(1.0, scrape.value(Scrape.upstreamSample("mcpd_relay_delivered_total", 1,
                    primary.url().toString())).orElseThrow());
            assertTrue(scrape.value("mcpd_uptime_seconds").orElseThrow() > 0);
            assertTrue(scrape.text().contains("jvm_memory_used_bytes"), "JVM metrics from Micrometer's binders");
            assertTrue(scrape.text().contains("process_cpu_usage"), "process metrics");
        }
    }

    @Test
    void failoverAndFailedAttemptCountersMoveWhenThePrimaryFails() throws Exception {
        try (TestUpstream primary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503)
                     .withHeader("Retry-After", "60"));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = relay(Map.of(), primary, secondary)) {
            post(relay, 100);
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            await().atMost(PATIENCE).until(() -> scrape(relay).value("mcpd_relay_failovers_total").orElse(0) == 1);
            Scrape scrape = scrape(relay);
            assertEquals(1.0, scrape.value(Scrape.upstreamSample("mcpd_relay_failed_attempts_total", 1,
                    primary.url().toString())).orElseThrow());
            assertEquals(1.0, scrape.value(Scrape.upstreamSample("mcpd_relay_delivered_total", 2,
                    secondary.url().toString())).orElseThrow());
        }
    }

    @Test
    void theDeadLetterCounterMovesWhenAnUpstreamRefusesForGood() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(400));
             RunningRelay relay = relay(Map.of(), upstream)) {
            post(relay, 100);
            await().atMost(PATIENCE).until(() -> scrape(relay).value("mcpd_relay_dead_letter_total").orElse(0) == 1);
        }
    }

    @Test
    void theRefusedFullCounterMovesWhenTheSpoolTurnsARequestAway() throws Exception {
        try (TestUpstream down = TestUpstream.refusing();
             RunningRelay relay = relay(Map.of("MCPD_SPOOL_MAX_BYTES", "2KiB"), down)) {
            int status;
            do {
                status = post(relay, 300);
            } while (status == 202);
            assertEquals(503, status);
            Scrape scrape = scrape(relay);
            assertEquals(1.0, scrape.value("mcpd_relay_refused_full_total").orElseThrow());
            assertEquals(scrape.value("mcpd_relay_spool_entries").orElseThrow(),
                    scrape.value("mcpd_relay_accepted_total").orElseThrow());
        }
    }

    @Test
    void theUpGaugeIsOneForAnAnsweringUpstreamAndZeroForAnotherOne() throws Exception {
        try (TestUpstream down = TestUpstream.refusing(); TestUpstream up = TestUpstream.start(); RunningRelay relay = relay(Map.of(), up, down)) {
            await().atMost(PATIENCE).until(() -> scrape(relay).value(Scrape.upstreamSample(
                    "mcpd_relay_upstream_up", 1, up.url().toString())).orElse(0) == 1);
            assertEquals(0.0, scrape(relay).value(Scrape.upstreamSample("mcpd_relay_upstream_up", 2,
                    down.url().toString())).orElseThrow());
        }
    }

    @Test
    void spoolGaugesMatchTheSpoolAfterARestart() throws Exception {
        try (TestUpstream down = TestUpstream.refusing()) {
            long bytes;
            try (RunningRelay relay = relay(Map.of(), down)) {
                for (int i = 0; i < 3; i++) {
                    assertEquals(202, post(relay, 200));
                }
                bytes = relay.application().spool().bytes();
                assertEquals((double) bytes, scrape(relay).value("mcpd_relay_spool_bytes").orElseThrow());
            }
            try (RunningRelay relay = relay(Map.of(), down)) {
                Scrape scrape = scrape(relay);
                assertEquals(3.0, scrape.value("mcpd_relay_spool_entries").orElseThrow());
                assertEquals((double) bytes, scrape.value("mcpd_relay_spool_bytes").orElseThrow());
                assertTrue(scrape.value("mcpd_relay_spool_oldest_seconds").orElseThrow() > 0, "age of the oldest");
                assertEquals(0.0, scrape.value("mcpd_relay_accepted_total").orElseThrow(),
                        "a counter starts at zero");
            }
        }
    }
    @Test
    void pipelinedScrapesNeverKeepTheLivenessProbeWaiting() throws Exception {
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = relay(Map.of(), upstream)) {
            byte[] scrapes = "GET /metrics HTTP/1.1\r\nHost: relay\r\n\r\n".repeat(400)
                    .getBytes(StandardCharsets.US_ASCII);
            List<Socket> flood = new ArrayList<>();
            AtomicLong answered = new AtomicLong();
            try {
                // Twice as many connections as the port has event loops, each with 400 scrapes pipelined, read back.
                for (int i = 0; i < 4; i++) {
                    Socket socket = new Socket("127.0.0.1", relay.port());
                    flood.add(socket);
                    Thread reader = new Thread(() -> {
                        byte[] buffer = new byte[65536];
                        try {
                            for (int n; (n = socket.getInputStream().read(buffer)) > 0; ) {
                                answered.addAndGet(n);
                            }
                        } catch (IOException closed) {
                            // the test is over
                        }
                    });
                    reader.setDaemon(true);
                    reader.start();
                    socket.getOutputStream().write(scrapes);
                    socket.getOutputStream().flush();
                }
                await().atMost(PATIENCE).until(() -> answered.get() > 0);
                long slowest = 0;
                for (int probe = 0; probe < 10; probe++) {
                    long started = System.nanoTime();
                    HttpResponse<String> alive = HTTP.send(HttpRequest
                            .newBuilder(relay.uri("/healthz")).timeout(Duration.ofSeconds(30)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, alive.statusCode());
                    slowest = Math.max(slowest, (System.nanoTime() - started) / 1_000_000);
                }
                // A liveness bound, not a speed figure: the audit saw 10-30 s while scrapes held the event loops; here
                // 1.8-3.2 s before the scrapes had a thread of their own, 0.17-0.19 s after (2 cores, other load).
                ReliabilityReport.assertHostile("a3-m6", "1 600 GET /metrics pipelined on 4"
                                + " connections of an open relay (no --ingest-key), answers read back",
                        "/healthz answered within 1 s throughout", "slowest of 10 probes " + slowest + " ms",
                        slowest < 1_000);
            } finally {
                for (Socket socket : flood) {
                    socket.close();
                }
            }
        }
    }
}
