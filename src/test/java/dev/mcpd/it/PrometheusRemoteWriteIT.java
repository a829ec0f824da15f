package dev.mcpd.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.testing.LocalTool;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real receiver that refuses old samples for good, behind the relay: Prometheus A scrapes itself every second and
 * remote-writes through the packaged relay to Prometheus B (Debian's prometheus, {@code
 * --web.enable-remote-write-receiver}, no out-of-order window). Through a 20 s outage of B, a relay {@code kill -9}
 * with a backlog, and a relay restart with a backlog, every sample A scraped is in B, and B refused nothing: the
 * backlog left in order. Prometheus: {@code MCPD_TEST_PROMETHEUS} (.ci/promtool.sh sets it) or {@code prometheus} on
 * the PATH; skipped, saying so, where neither is.
 */
class PrometheusRemoteWriteIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    /** How far back the comparison starts: the first scrapes, before A's remote write settled, are left out. */
    private static final Duration SETTLE = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private final List<Process> prometheuses = new ArrayList<>();

    /** A Prometheus on {@code port}, its data in {@code data}, configured by {@code config}. */
    private Process prometheus(String binary, String name, int port, String config, String... flags)
            throws IOException {
        Path home = Files.createDirectories(dir.resolve(name));
        Files.writeString(home.resolve("prometheus.yml"), config);
        List<String> command = new ArrayList<>(List.of(binary, "--config.file=" + home.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + home.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
                "--log.level=info"));
        command.addAll(List.of(flags));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("log").toFile())).start();
        prometheuses.add(process);
        await(name + " ready").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .ignoreExceptions().until(() -> get(port, "/-/ready").statusCode() == 200);
        return process;
    }

    private static HttpResponse<String> get(int port, String pathAndQuery) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The value of an instant PromQL query at {@code at}, as a number (0 for an empty result). */
    private static double query(int port, String promql, Instant at) throws IOException, InterruptedException {
        HttpResponse<String> answer = get(port, "/api/v1/query?query=" + URLEncoder.encode(promql,
                StandardCharsets.UTF_8) + "&time=" + at.getEpochSecond());
        JsonNode result = JSON.readTree(answer.body()).path("data").path("result");
        return result.isEmpty() ? 0 : result.get(0).path("value").get(1).asDouble();
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    @Test
    void everySampleReachesAPrometheusThatRefusesOldOnesThroughOutagesKillsAndRestarts() throws Exception {
        Optional<String> binary = LocalTool.find("MCPD_TEST_PROMETHEUS", "prometheus");
        assumeTrue(binary.isPresent(), "no prometheus here: set MCPD_TEST_PROMETHEUS or put prometheus on the PATH"
                + " (.ci/promtool.sh unpacks Debian's)");
        int portA = PackagedJar.freePort();
        int portB = PackagedJar.freePort();
        int portRelay = PackagedJar.freePort();
        String receiverConfig = "global:\n  scrape_interval: 1s\nscrape_configs: []\n";
        Process b = prometheus(binary.get(), "b", portB, receiverConfig, "--web.enable-remote-write-receiver");
        Path relayHome = Files.createDirectories(dir.resolve("relay"));
        String[] relayArgs = {"relay", "--listen", "127.0.0.1:" + portRelay, "--spool-dir",
                relayHome.resolve("spool").toString(), "--upstream", "http://127.0.0.1:" + portB, "--upstream-probe",
                "1=http://127.0.0.1:" + portB + "/-/ready"};
        PackagedJar relay = PackagedJar.start(relayHome, portRelay, Map.of(), relayArgs);
        List<String> story = new ArrayList<>();
        try {
            Instant start = Instant.now();
            prometheus(binary.get(), "a", portA, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    + "scrape_configs:\n  - job_name: a\n    static_configs:\n      - targets: ['127.0.0.1:" + portA
                    + "']\nremote_write:\n  - url: http://127.0.0.1:" + portRelay + "/api/v1/write\n"
                    + "    queue_config:\n      min_backoff: 100ms\n      max_backoff: 1s\n"
                    + "      batch_send_deadline: 1s\n");
            Thread.sleep(Duration.ofSeconds(15).toMillis()); // steady state: a length of scraping, not a condition

            stop(b); // the receiver down for 20 s: the relay spools what A sends
            story.add("B down at " + Instant.now());
            Thread.sleep(Duration.ofSeconds(20).toMillis());
            b = prometheus(binary.get(), "b", portB, receiverConfig, "--web.enable-remote-write-receiver");
            story.add("B back at " + Instant.now());
            awaitSpoolEmpty(relay);

            stop(b); // a backlog, then the relay killed with it and started again
            Thread.sleep(Duration.ofSeconds(8).toMillis());
            relay.kill9();
            story.add("relay kill -9 with a backlog at " + Instant.now());
            relay = PackagedJar.start(relayHome, portRelay, Map.of(), relayArgs);
            b = prometheus(binary.get(), "b", portB, receiverConfig, "--web.enable-remote-write-receiver");
            awaitSpoolEmpty(relay);

            stop(b); // a backlog, then the relay stopped (SIGTERM) and started again
            Thread.sleep(Duration.ofSeconds(8).toMillis());
            relay.terminate();
            story.add("relay restarted with a backlog at " + Instant.now());
            relay = PackagedJar.start(relayHome, portRelay, Map.of(), relayArgs);
            b = prometheus(binary.get(), "b", portB, receiverConfig, "--web.enable-remote-write-receiver");
            Instant until = Instant.now().minusSeconds(5);
            int aPort = portA;
            int bPort = portB;
            await("A sent everything it scraped until " + until).atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500)).ignoreExceptions().until(() -> query(aPort,
                    "min(prometheus_remote_storage_queue_highest_sent_timestamp_seconds)", Instant.now())
                    >= until.getEpochSecond() + 1);
            awaitSpoolEmpty(relay);
            long window = Duration.between(start.plus(SETTLE), until).toSeconds();
            // The samples of job a in the window, series by series: A's own, and what reached B through the relay.
            // (PromQL cannot sum counts over every series at once — two series that differ only by name clash once
            // count_over_time drops the name — so a set of them, of every kind, each compared alone.)
            List<String> compared = List.of("up", "scrape_samples_scraped", "scrape_duration_seconds",
                    "prometheus_tsdb_head_series", "prometheus_tsdb_head_samples_appended_total",
                    "prometheus_http_requests_total", "prometheus_http_request_duration_seconds_bucket",
                    "go_gc_duration_seconds", "process_resident_memory_bytes");
            double inA = 0;
            for (String metric : compared) {
                String samples = "sum(count_over_time(" + metric + "{job=\"a\"}[" + window + "s]))";
                double a = query(aPort, samples, until);
                inA += a;
                try {
                    await(metric + ": B holds every sample A scraped").atMost(Duration.ofSeconds(30))
                            .pollInterval(Duration.ofSeconds(1)).ignoreExceptions()
                            .until(() -> query(bPort, samples, until) >= a);
                } catch (ConditionTimeoutException e) {
                    // what B said of it: the reason is in its log
                }
                assertEquals(a, query(bPort, samples, until), metric + ": every sample A scraped is in B; " + story
                        + "; B's log: " + Files.readAllLines(dir.resolve("b").resolve("log")).stream()
                        .filter(line -> line.contains("level=warn") || line.contains("level=error")).limit(10)
                        .toList());
            }
            String scrapes = "count_over_time(up{job=\"a\"}[" + window + "s])";
            double scrapesInA = query(aPort, scrapes, until);
            String log = Files.readString(dir.resolve("b").resolve("log"));
            JsonNode status = JSON.readTree(get(portRelay, "/relay/status").body());
            JsonNode toB = status.path("upstreams").path(0);
            System.out.printf("[prometheus] %s; window %d s: %.0f scrapes, %.0f samples of %d series kinds compared, all"
                    + " in B; the last relay delivered %d entries in %d requests; dead letters %d%n", story, window,
                    scrapesInA, inA, compared.size(), toB.path("delivered").asLong(), toB.path("requests").asLong(),
                    status.path("spool").path("deadLetters").asLong());
            assertTrue(toB.path("requests").asLong() < toB.path("delivered").asLong(), "a backlog travelled merged: "
                    + toB);
            assertTrue(scrapesInA >= window - 5, "A scraped every second: " + scrapesInA + " in " + window + " s");
            assertEquals(scrapesInA, query(bPort, scrapes, until), "no scrape missing in B");
            assertEquals(0, status.path("spool").path("deadLetters").asLong(), "B refused nothing");
            assertTrue(!log.contains("out of order") && !log.contains("out-of-order"), "B's log: out of order");
        } finally {
            relay.close();
            for (Process process : prometheuses) {
                process.destroyForcibly();
            }
        }
    }

    private static void awaitSpoolEmpty(PackagedJar relay) {
        await("the relay's spool is empty").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions().until(() -> JSON.readTree(HTTP.send(HttpRequest.newBuilder(
                        relay.uri("/relay/status")).build(), HttpResponse.BodyHandlers.ofString()).body())
                        .path("spool").path("entries").asLong(-1) == 0);
    }
}
