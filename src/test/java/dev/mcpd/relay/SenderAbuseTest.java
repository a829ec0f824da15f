package dev.mcpd.relay;

import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static dev.mcpd.testing.TestTuning.HTTP;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.GrpcClient;
import dev.mcpd.testing.Ports;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.RawHttp2;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Senders that abuse the front door: a body that could never fit, streams reset as soon as they open, header values a
 * sender can write only over HTTP/2, waits abandoned, and what an unauthenticated caller may read of a relay that
 * has an ingest key. Each is answered precisely, costs a bounded amount, and keeps nothing it should not.
 */
class SenderAbuseTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private static double metric(RunningRelay relay, String name) throws Exception {
        String text = HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return text.lines().filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    private static HttpResponse<String> get(RunningRelay relay, String path, String key) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri(path)).timeout(Duration.ofSeconds(5));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aContentLengthPastTheLimitIs413BeforeTheSpoolIsAskedAndReadinessStaysOk() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            List<String> answers = new ArrayList<>();
            List<Integer> readiness = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                try (RawHttp raw = new RawHttp(relay.port(), 3000)) {
                    String answer = raw.send("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json"
                            + "\r\nContent-Length: 99999999999\r\n\r\n").readResponse();
                    answers.add(answer.substring(0, answer.indexOf("\r\n")));
                }
                readiness.add(get(relay, "/readyz", null).statusCode());
            }
            double refusedFull = metric(relay, "mcpd_relay_refused_full_total");
            boolean pass = answers.stream().allMatch(a -> a.startsWith("HTTP/1.1 413")) && !readiness.contains(503)
                    && refusedFull == 0;
            assertHostile("a-content-length", "20 × POST with Content-Length: 99999999999 and no body, /readyz"
                            + " polled between them", "413 each; /readyz never 503; mcpd_relay_refused_full_total 0",
                    answers.get(0) + " ×" + answers.stream().distinct().count() + " kind(s); /readyz " + readiness.stream()
                            .distinct().toList() + "; refused_full " + refusedFull, pass);
            assertTrue(pass);
        }
    }

    @Test
    void streamsResetRightAfterTheirHeadersCostABoundedLogAndNoStackTrace() throws Exception {
        try (CapturedLog log = new CapturedLog(); RunningRelay relay = RunningRelay.start(dir)) {
            long started = System.nanoTime();
            int resets = 0;
            for (int connection = 0; connection < 38; connection++) {
                try (RawHttp2 h2 = new RawHttp2(relay.port(), 5000)) {
                    for (int i = 0; i < 100; i++) {
                        int stream = h2.headers("/v1/ingest", Map.of("content-type", "application/json",
                                "content-length", "100"), false);
                        h2.reset(stream);
                        resets++;
                    }
                    // the connection still serves: an honest request after the resets is answered
                    RawHttp2.Answer honest = h2.post("/v1/ingest", Map.of("content-type", "application/json"),
                            "{\"events\":[{}]}".getBytes(StandardCharsets.UTF_8));
                    assertEquals(202, honest.status(), honest.headers().toString());
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long lines = log.events("dev.mcpd", Level.INFO).size();
            long errors = log.errors().size();
            boolean stackTraces = log.events("", Level.INFO).stream().anyMatch(e -> e.getThrowableProxy() != null);
            // at most one line per kind of refusal per second, plus the relay's own start-up lines
            boolean pass = errors == 0 && !stackTraces && lines <= 3 * (seconds + 2) + 20;
            assertHostile("a-reset-streams", resets + " HTTP/2 streams reset (RST_STREAM) right after HEADERS, on 38"
                    + " connections", "no answer to them, no ERROR, no stack trace, a log bounded by time (rate-limited)",
                    lines + " log lines in " + String.format("%.1f", seconds) + " s, " + errors + " ERROR, stack traces: "
                            + stackTraces, pass);
            assertTrue(pass, log.events("", Level.INFO).toString());
        }
    }

    @Test
    void keptHeaderValuesWithControlCharactersAreRefusedOnHttp2AndGrpcAndNothingIsSpooled() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            byte[] body = ("{\"events\":[{\"id\":\"" + UUID.randomUUID() + "\"}]}").getBytes(StandardCharsets.UTF_8);
            Map<String, Map<String, String>> cases = Map.of(
                    "content-type with CR LF", Map.of("content-type", "application/json\r\nx-injected: 1"),
                    "content-encoding with LF", Map.of("content-type", "application/json", "content-encoding",
                            "identity\nx: y"),
                    "authorization with NUL", Map.of("content-type", "application/json", "authorization",
                            "Bearer k\0ey"),
                    "x-mcpd-key with CR", Map.of("content-type", "application/json", "x-mcpd-key", "key\r"),
                    "idempotency-key with LF", Map.of("content-type", "application/json", "idempotency-key", "a\nb"));
            List<String> observed = new ArrayList<>();
            boolean all400 = true;
            try (RawHttp2 h2 = new RawHttp2(relay.port(), 5000)) {
                for (var each : cases.entrySet()) {
                    int status = h2.post("/v1/ingest", each.getValue(), body).status();
                    observed.add(each.getKey() + ": " + status);
                    all400 &= status == 400;
                }
                RawHttp2.Answer grpc = h2.post(GrpcClient.TRACES, Map.of("content-type", "application/grpc", "te",
                        "trailers", "authorization", "Bearer a\r\nb"), new byte[] {0, 0, 0, 0, 0});
                observed.add("gRPC authorization with CR LF: grpc-status " + grpc.headers().get("grpc-status"));
                all400 &= "3".equals(grpc.headers().get("grpc-status"));
            }
            boolean spooled = relay.spooled().stream().anyMatch(e -> Arrays.equals(e.request().body(), body));
            boolean pass = all400 && !spooled && relay.spooled().isEmpty();
            assertHostile("a-control-characters", "HTTP/2 and gRPC requests whose content type, encoding, credential"
                            + " or key holds CR, LF or NUL", "400 (gRPC INVALID_ARGUMENT), nothing spooled",
                    String.join("; ", observed) + (spooled ? "; SPOOLED" : ""), pass);
            assertTrue(pass, observed.toString());
        }
    }

    @Test
    void anAbandonedWaitGivesItsPlaceBackWhenTheSenderHangsUp() throws Exception {
        int upstreamPort = Ports.free();
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", "http://127.0.0.1:" + upstreamPort),
                DeliveryTest.FAST)) {
            List<Socket> waiting = new ArrayList<>();
            String body = "{\"events\":[{}]}";
            for (int i = 0; i < 64; i++) {
                Socket socket = new Socket("127.0.0.1", relay.port());
                OutputStream out = socket.getOutputStream();
                out.write(("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
                        + "mcpd-relay-wait: 60s\r\nIdempotency-Key: abandoned-" + i + "\r\nContent-Length: "
                        + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
                out.flush();
                waiting.add(socket);
            }
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 64);
            for (Socket socket : waiting) {
                socket.close(); // 64 senders give up while they wait
            }
            try (TestUpstream upstream = TestUpstream.start(upstreamPort)) {
                HttpResponse<String> honest = SynchronousDeliveryTest.post(relay, "/v1/ingest", "application/json",
                        "{\"events\":[{\"honest\":1}]}", "15s");
                String fate = honest.headers().firstValue("mcpd-relay").orElse("");
                boolean pass = fate.equals("delivered");
                assertHostile("a-abandoned-waits", "64 requests with mcpd-relay-wait: 60s whose senders hang up, then"
                                + " an honest waiter", "the honest waiter waits and hears its delivery (the 64 places"
                                + " were given back)", "mcpd-relay: " + fate + " (" + honest.statusCode() + ")", pass);
                assertTrue(pass, honest.headers().map().toString());
            }
        }
    }

    @Test
    void withAnIngestKeyStatusAndMetricsAnswerOnlyTheKeyAndReadinessTellsOthersOnlyItsVerdict() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_INGEST_KEY", "s3cret-key"))) {
            int status = get(relay, "/relay/status", null).statusCode();
            int metrics = get(relay, "/metrics", null).statusCode();
            HttpResponse<String> readyOpen = get(relay, "/readyz", null);
            int statusWithKey = get(relay, "/relay/status", "s3cret-key").statusCode();
            int metricsWithKey = get(relay, "/metrics", "s3cret-key").statusCode();
            HttpResponse<String> readyWithKey = get(relay, "/readyz", "s3cret-key");
            int healthz = get(relay, "/healthz", null).statusCode();
            boolean pass = status == 401 && metrics == 401 && statusWithKey == 200 && metricsWithKey == 200
                    && healthz == 200 && readyOpen.body().strip().equals("degraded")
                    && readyWithKey.body().contains("127.0.0.1:9") && !readyOpen.body().contains("127.0.0.1");
            assertHostile("a-unauthenticated-views", "GET /relay/status, /metrics, /readyz without the key of a relay"
                            + " with --ingest-key", "401, 401, and /readyz's verdict without its detail (no upstream,"
                            + " no spool path); all of it with the key; /healthz open",
                    status + ", " + metrics + ", /readyz \"" + readyOpen.body().strip() + "\"; with the key " + statusWithKey
                            + ", " + metricsWithKey + ", " + readyWithKey.statusCode(), pass);
            assertTrue(pass, readyOpen.body() + " / " + readyWithKey.body());
            assertFalse(readyOpen.body().contains(relay.spoolDir().toString()));
        }
    }
}
