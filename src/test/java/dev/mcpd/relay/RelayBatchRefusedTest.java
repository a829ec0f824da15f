package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.wire.RelayBatch;
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
 * A relay refuses {@code POST /v1/relay-batches} from a sender: relay batches are a transport between mcpd processes,
 * which a relay builds itself when delivering. The refusal is a 404 with a one-line reason, counted and logged as any
 * refusal; nothing is spooled, so delivery never sees it. A path that ends in it (under a prefix, with a query, a
 * trailing or a doubled slash, escaped or in another letter case) is refused the same way. The reason is the one
 * docs/relay-batch.md shows.
 */
class RelayBatchRefusedTest {

    private static final List<String> REFUSED = List.of("/v1/relay-batches", "/v1/relay-batches?tenant=a",
            "/tenant-a/v1/relay-batches", "/v1/relay-batches/", "//v1//relay-batches", "/V1/Relay-Batches",
            "/v1/relay%2Dbatches", "/x/../v1/relay-batches");

    @TempDir
    Path dir;

    /** A relay batch as a relay would send one: one entry, its own bytes unique to the test. */
    private static byte[] batch(String marker) {
        return RelayBatch.encode(List.of(new RelayBatch.Entry("POST", "/v1/ingest", "application/json", "",
                "k-" + marker, System.currentTimeMillis(),
                ("{\"events\":[{\"id\":\"" + marker + "\"}]}").getBytes(StandardCharsets.UTF_8))));
    }

    private static HttpResponse<String> post(RunningRelay relay, String path, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(path)).header("Content-Type", RelayBatch.CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static boolean spooled(RunningRelay relay, byte[] body) {
        return relay.spooled().stream().anyMatch(e -> Arrays.equals(e.request().body(), body));
    }

    private static boolean holds(byte[] haystack, byte[] needle) {
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                return true;
            }
        }
        return false;
    }

    private static double refusedCount(RunningRelay relay) throws Exception {
        String text = HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return Scrape.of(text).value("mcpd_ingest_requests_total{outcome=\"refused\",protocol=\"http\"}")
                .orElseThrow(() -> new AssertionError("no mcpd_ingest_requests_total sample:\n" + text));
    }

    @Test
    void aRelayBatchFromASenderIs404CountedLoggedAndNeverSpooledOrDelivered() throws Exception {
        // The upstream does not say it takes relay batches, so the relay never sends one of its own: any relay batch
        // it received would be a sender's.
        // The answer docs/relay-batch.md shows, line break included.
        String reason = DocExample.block(Path.of("docs/relay-batch.md"), "relay-batch-refused-by-relay");
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream);
             CapturedLog log = new CapturedLog()) {
            List<byte[]> posted = new ArrayList<>();
            for (String path : REFUSED) {
                double before = refusedCount(relay);
                byte[] body = batch(UUID.randomUUID().toString());
                posted.add(body);
                HttpResponse<String> answer = post(relay, path, body);
                assertEquals(404, answer.statusCode(), path);
                assertEquals(reason, answer.body(), path);
                assertTrue(answer.headers().firstValue("mcpd-relay").isEmpty(), path + ": not spooled");
                assertEquals(before + 1, refusedCount(relay), path + ": counted as refused");
                assertFalse(spooled(relay, body), path + ": nothing in the spool");
            }
            // The absolute form is reduced to its path: the same refusal.
            try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
                String response = raw.send("POST http://collector.example/v1/relay-batches HTTP/1.1\r\nHost: x\r\n"
                        + "Content-Type: " + RelayBatch.CONTENT_TYPE + "\r\nContent-Length: 4\r\n\r\nMRB1")
                        .readResponse();
                assertTrue(response.startsWith("HTTP/1.1 404"), response);
                assertTrue(response.endsWith(reason), response);
            }
            // One refusal line per kind per second (the log is rate-limited, and other tests of this JVM may have
            // just logged a 404): refuse again until one is written.
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
                assertEquals(404, post(relay, "/v1/relay-batches", batch("log")).statusCode());
                assertTrue(log.events("dev.mcpd.ingest.refusals", Level.WARN).stream()
                        .map(e -> e.getFormattedMessage())
                        .anyMatch(line -> line.startsWith("refused status=404 reason=\"not an ingest path:")
                                && line.contains("path=\"/v1/relay-batches\"")), "a refusal line");
            });

            // Delivery goes on, and sees none of them: a request sent after them arrives alone.
            byte[] after = "{\"events\":[{\"id\":\"after\"}]}".getBytes(StandardCharsets.UTF_8);
            assertEquals(202, DeliveryTest.post(relay, "/v1/ingest", after, "Content-Type", "application/json"));
            await().atMost(PATIENCE).until(() -> upstream.received().stream()
                    .anyMatch(r -> Arrays.equals(r.body(), after)));
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(1, upstream.received().size(), "only the request sent after them");
            for (TestUpstream.Received received : upstream.received()) {
                assertFalse(received.uri().toLowerCase().contains("relay-batches"), received.uri());
                for (byte[] body : posted) {
                    assertFalse(holds(received.body(), body), "a refused batch was delivered");
                }
            }
            assertEquals(0, relay.application().deadLetters().count());
        }
    }

    @Test
    void pathsThatOnlyLookLikeItAreIngestedAsAnyOther() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            for (String path : List.of("/v1/relay-batches2", "/v1/relay-batches/x", "/v1/relay-batch",
                    "/v1/traces?to=/v1/relay-batches")) {
                byte[] body = batch(UUID.randomUUID().toString());
                assertEquals(2, post(relay, path, body).statusCode() / 100, path);
                assertTrue(spooled(relay, body), path);
            }
        }
    }
}
