package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.send;
import static dev.mcpd.collector.CollectorHttp.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.CollectorHttp.Stats;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.RawHttp;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The collector checks {@code --ingest-key} (401) and {@code --max-body-bytes} (413). */
class CollectorRequestLimitsTest {

    static final String KEY = "collector-test-key-1";
    static final String BATCH = "{\"events\":[{\"a\":1}]}";

    @TempDir
    Path dir;

    private RunningCollector startWithIngestKey() {
        return RunningCollector.start(dir, Map.of("MCPD_INGEST_KEY", KEY));
    }

    private RunningCollector startWithMaxBodyBytesOf1KiB() {
        return RunningCollector.start(dir, Map.of("MCPD_MAX_BODY_BYTES", "1KiB"));
    }

    /** The head of a {@code POST /v1/ingest} announcing a JSON body of this many bytes. */
    private static String ingestHead(int contentLength) {
        return "POST /v1/ingest HTTP/1.1\r\nHost: collector\r\nContent-Type: application/json\r\nContent-Length: "
                + contentLength + "\r\n\r\n";
    }

    @Test
    void withAnIngestKeyARequestWithoutItIsRefused401AndNothingStored() {
        try (RunningCollector collector = startWithIngestKey()) {
            HttpResponse<String> answer = send(postJson(collector.uri("/v1/ingest"), BATCH));

            assertEquals(401, answer.statusCode(), answer::body);
            assertFalse(answer.body().contains(KEY), "the key is never echoed");
            assertEquals(new Stats(0, 0, 0), stats(collector));
        }
    }

    @Test
    void withAnIngestKeyAWrongKeyIsRefused401() {
        try (RunningCollector collector = startWithIngestKey()) {
            HttpResponse<String> answer = send(postJson(collector.uri("/v1/ingest"), BATCH)
                    .header("Authorization", "Bearer " + KEY + "x"));

            assertEquals(401, answer.statusCode(), answer::body);
        }
    }

    @Test
    void withAnIngestKeyABearerTokenIsTaken() {
        try (RunningCollector collector = startWithIngestKey()) {
            HttpResponse<String> answer = send(postJson(collector.uri("/v1/ingest"), BATCH)
                    .header("Authorization", "Bearer " + KEY));

            assertEquals(200, answer.statusCode(), answer::body);
            assertEquals(new Stats(1, 1, 0), stats(collector));
        }
    }

    @Test
    void withAnIngestKeyTheXMcpdKeyHeaderIsTaken() {
        try (RunningCollector collector = startWithIngestKey()) {
            HttpResponse<String> answer = send(postJson(collector.uri("/v1/traces"), BATCH)
                    .header("x-mcpd-key", KEY));

            assertEquals(200, answer.statusCode(), answer::body);
            assertEquals(new Stats(1, 1, 0), stats(collector));
        }
    }

    @Test
    void withAnIngestKeyTheProbesStillAnswerWithoutIt() {
        try (RunningCollector collector = startWithIngestKey()) {
            assertEquals(200, CollectorHttp.get(collector.uri("/healthz")).statusCode());
            assertEquals(200, CollectorHttp.get(collector.uri("/readyz")).statusCode());
        }
    }

    @Test
    void aBodyOverTheMaxBodyBytesIsRefused413AndNothingStored() {
        try (RunningCollector collector = startWithMaxBodyBytesOf1KiB()) {
            String big = "{\"events\":[{\"pad\":\"" + "x".repeat(1100) + "\"}]}";

            HttpResponse<String> answer = send(postJson(collector.uri("/v1/ingest"), big));

            assertEquals(413, answer.statusCode(), answer::body);
            assertTrue(answer.body().contains("larger than the limit of 1024 bytes"), answer::body);
            assertEquals(new Stats(0, 0, 0), stats(collector));
        }
    }

    @Test
    void aBodyOfExactlyTheMaxBodyBytesIsTaken() {
        try (RunningCollector collector = startWithMaxBodyBytesOf1KiB()) {
            String prefix = "{\"events\":[{\"pad\":\"";
            String suffix = "\"}]}";
            String exact = prefix + "x".repeat(1024 - prefix.length() - suffix.length()) + suffix;
            assertEquals(1024, exact.length());

            HttpResponse<String> answer = send(postJson(collector.uri("/v1/ingest"), exact));

            assertEquals(200, answer.statusCode(), answer::body);
            assertEquals("{\"accepted\":1,\"duplicate\":0,\"rejected\":0}", answer.body());
        }
    }

    @Test
    void aGzipBatchInflatingPastEightTimesTheMaxBodyBytesIsRefused413() {
        try (RunningCollector collector = startWithMaxBodyBytesOf1KiB()) {
            byte[] bomb = OtlpTelemetry.gzip(("{\"events\":[{\"pad\":\"" + "x".repeat(9000) + "\"}]}")
                    .getBytes(StandardCharsets.UTF_8));
            assertTrue(bomb.length < 1024, "the compressed body itself is within the limit");

            HttpResponse<String> answer = send(CollectorHttp.post(collector.uri("/v1/ingest"), "application/json",
                    bomb).header("Content-Encoding", "gzip"));

            assertEquals(413, answer.statusCode(), answer::body);
            assertEquals(new Stats(0, 0, 0), stats(collector));
        }
    }

    @Test
    void aDeclaredLengthOverTheMaxBodyBytesIsRefused413BeforeTheBodyIsSent() throws Exception {
        try (RunningCollector collector = startWithMaxBodyBytesOf1KiB();
             RawHttp raw = new RawHttp(collector.port(), 10_000)) {
            // Only the head: the answer must come without a byte of the body.
            String answer = raw.send(ingestHead(1025)).readResponse();

            assertTrue(answer.startsWith("HTTP/1.1 413 "), answer);
            assertTrue(raw.closedByServer(), "the unread body never becomes a next request");
            assertEquals(new Stats(0, 0, 0), stats(collector));
        }
    }

    @Test
    void aBodyNotReceivedWithinTheRequestTimeoutIsRefused408AndNothingStored() throws Exception {
        try (RunningCollector collector = RunningCollector.start(dir, Map.of("MCPD_REQUEST_TIMEOUT_SECONDS", "1"));
             RawHttp raw = new RawHttp(collector.port(), 10_000)) {
            String answer = raw.send(ingestHead(100) + "{\"events\":[").readResponse();

            assertTrue(answer.startsWith("HTTP/1.1 408 "), answer);
            assertEquals(new Stats(0, 0, 0), stats(collector));
        }
    }
}
