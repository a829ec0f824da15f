package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.post;
import static dev.mcpd.collector.CollectorHttp.sendForBytes;
import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.collector.CollectorHttp.Stats;
import dev.mcpd.collector.StoredBatches.Row;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * OTLP/HTTP on {@code /v1/traces}, {@code /v1/logs} and {@code /v1/metrics} — answered with the partial
 * success an exporter expects, stored byte for byte, deduplicated by {@code Idempotency-Key}.
 */
class OtlpIngestTest {

    /** Not a real export request, which the collector never decodes: binary bytes, including NUL and 0xff. */
    static final byte[] PROTOBUF = {0x0a, 0x00, 0x12, 0x03, (byte) 0xff, (byte) 0xfe, 0x0d, 0x0a, 0x1a, 0x01, 0x7f};
    static final String OTLP_JSON = "{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[]}]}";

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector();

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/v1/traces", "/v1/logs", "/v1/metrics"})
    void aProtobufExportIsAnswered200WithAnEmptyProtobufBody(String path) {
        HttpResponse<byte[]> answer = sendForBytes(post(collector.uri(path), "application/x-protobuf", PROTOBUF));

        assertEquals(200, answer.statusCode(), () -> new String(answer.body(), StandardCharsets.UTF_8));
        assertEquals("application/x-protobuf", answer.headers().firstValue("Content-Type").orElseThrow());
        assertEquals(0, answer.body().length, "an empty Export*ServiceResponse is zero bytes");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/v1/traces", "/v1/logs", "/v1/metrics"})
    void aJsonExportIsAnswered200WithAnEmptyPartialSuccess(String path) {
        HttpResponse<byte[]> answer = sendForBytes(post(collector.uri(path), "application/json",
                OTLP_JSON.getBytes(StandardCharsets.UTF_8)));

        assertEquals(200, answer.statusCode());
        assertEquals("application/json", answer.headers().firstValue("Content-Type").orElseThrow());
        assertEquals("{\"partialSuccess\":{}}", new String(answer.body(), StandardCharsets.UTF_8));
    }

    @Test
    void anExportIsStoredAsOneBatchOfOneEvent() {
        Stats before = stats(collector);

        sendForBytes(post(collector.uri("/v1/logs"), "application/x-protobuf", PROTOBUF));

        assertEquals(new Stats(before.batches() + 1, before.events() + 1, before.duplicates()), stats(collector));
    }

    @Test
    void aProtobufExportIsStoredByteForByteWithItsTargetAndContentType() {
        String target = "/v1/traces?run=" + UUID.randomUUID();

        assertEquals(200, sendForBytes(post(collector.uri(target), "application/x-protobuf", PROTOBUF)).statusCode());

        List<Row> rows = StoredBatches.withTarget(collector.dataFile(), target);
        assertEquals(1, rows.size());
        assertArrayEquals(PROTOBUF, rows.get(0).body());
        assertEquals("application/x-protobuf", rows.get(0).contentType());
        assertEquals("", rows.get(0).contentEncoding());
    }

    @Test
    void aGzipExportIsStoredAsReceivedStillCompressed() {
        String target = "/v1/metrics?run=" + UUID.randomUUID();
        byte[] compressed = gzip(PROTOBUF);

        HttpResponse<byte[]> answer = sendForBytes(post(collector.uri(target), "application/x-protobuf", compressed)
                .header("Content-Encoding", "gzip"));

        assertEquals(200, answer.statusCode());
        List<Row> rows = StoredBatches.withTarget(collector.dataFile(), target);
        assertEquals(1, rows.size());
        assertArrayEquals(compressed, rows.get(0).body());
        assertEquals("gzip", rows.get(0).contentEncoding());
    }

    @Test
    void aSecondCopyWithTheSameIdempotencyKeyIsADuplicateAndNotStored() {
        String key = "otlp-" + UUID.randomUUID();
        String target = "/v1/traces?run=" + UUID.randomUUID();
        assertEquals(200, sendForBytes(post(collector.uri(target), "application/x-protobuf", PROTOBUF)
                .header("Idempotency-Key", key)).statusCode());
        Stats before = stats(collector);

        HttpResponse<byte[]> again = sendForBytes(post(collector.uri(target), "application/x-protobuf",
                PROTOBUF).header("Idempotency-Key", key));

        assertEquals(200, again.statusCode(), "a duplicate is a success for the exporter");
        assertEquals(0, again.body().length);
        assertEquals(new Stats(before.batches(), before.events(), before.duplicates() + 1), stats(collector));
        assertEquals(1, StoredBatches.withTarget(collector.dataFile(), target).size(), "stored once");
    }

    @Test
    void exportsWithoutAKeyAreStoredEveryTime() {
        String target = "/v1/logs?run=" + UUID.randomUUID();

        sendForBytes(post(collector.uri(target), "application/x-protobuf", PROTOBUF));
        sendForBytes(post(collector.uri(target), "application/x-protobuf", PROTOBUF));

        assertEquals(2, StoredBatches.withTarget(collector.dataFile(), target).size());
    }
}
