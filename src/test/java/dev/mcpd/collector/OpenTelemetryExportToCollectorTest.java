package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.OtlpTelemetry.contains;
import static dev.mcpd.testing.OtlpTelemetry.gunzip;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.CollectorHttp.Stats;
import dev.mcpd.collector.StoredBatches.Row;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.OtlpTelemetry.Sender;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real client, the OpenTelemetry Java SDK's OTLP/HTTP span exporter (over each of its two HTTP senders), exports
 * to the collector directly, and through a relay in front of it (senders → relay → collector).
 */
class OpenTelemetryExportToCollectorTest {

    static final OtlpTelemetry TELEMETRY = new OtlpTelemetry("mcpd-collector-exporter-test",
            "dev.mcpd.collector.test");

    @TempDir
    Path dir;

    /** A relay started in this JVM on a free port, delivering to the collector, spooling in its own folder. */
    record Relay(RelayApplication application, int port) implements AutoCloseable {

        String endpoint(String path) {
            return "http://127.0.0.1:" + port + path;
        }

        @Override
        public void close() {
            application.close();
        }
    }

    private Relay relayInFrontOf(RunningCollector collector) {
        RelayApplication relay = RelayApplication.start(McpdConfig.fromEnvironment(Map.of(
                "MCPD_LISTEN", "127.0.0.1:0",
                "MCPD_DATA", dir.resolve("relay").resolve("mcpd.db").toString(),
                "MCPD_UPSTREAMS", collector.baseUrl())));
        return new Relay(relay, relay.address().port());
    }

    /** Exports the spans once to the endpoint with the sender and compression ("none" or "gzip"): it must succeed. */
    private static void assertExported(Sender sender, String endpoint, String compression,
                                       Collection<SpanData> spans) {
        CompletableResultCode result = sender.exportSpans(endpoint, compression, spans, 15);
        assertTrue(result.isDone(), "the export finished in time");
        assertTrue(result.isSuccess(), () -> "the export succeeded; failure: " + result.getFailureThrowable());
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aSpanExportedToTheCollectorSucceedsAndIsStoredAsOneBatch(Sender sender) {
        String spanName = "collector-test span " + UUID.randomUUID();
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            Stats before = stats(collector);

            assertExported(sender, collector.uri("/v1/traces").toString(), "none", TELEMETRY.spans(spanName));

            assertEquals(new Stats(before.batches() + 1, before.events() + 1, before.duplicates()), stats(collector));
            List<Row> rows = StoredBatches.withTarget(collector.dataFile(), "/v1/traces");
            assertEquals(1, rows.size());
            assertEquals("application/x-protobuf", rows.get(0).contentType());
            assertTrue(contains(rows.get(0).body(), spanName), "the stored protobuf carries the span's name");
        }
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aGzipSpanExportToTheCollectorIsStoredCompressedAsSent(Sender sender) throws IOException {
        String spanName = "collector-test gzip span " + UUID.randomUUID();
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            assertExported(sender, collector.uri("/v1/traces").toString(), "gzip", TELEMETRY.spans(spanName));

            List<Row> rows = StoredBatches.withTarget(collector.dataFile(), "/v1/traces");
            assertEquals(1, rows.size());
            assertEquals("gzip", rows.get(0).contentEncoding());
            assertTrue(contains(gunzip(rows.get(0).body()), spanName),
                    "the stored body gunzips to the span's protobuf");
        }
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aSpanExportedThroughARelaySucceedsAndReachesTheCollectorOnce(Sender sender) {
        String spanName = "relayed span " + UUID.randomUUID();
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"));
             Relay relay = relayInFrontOf(collector)) {
            Stats before = stats(collector);
            String relayEndpoint = relay.endpoint("/v1/traces");

            assertExported(sender, relayEndpoint, "none", TELEMETRY.spans(spanName));

            await().atMost(PATIENCE).until(() -> stats(collector).batches() == before.batches() + 1);
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(new Stats(before.batches() + 1, before.events() + 1, before.duplicates()), stats(collector),
                    "delivered once, not doubled");
            Row row = StoredBatches.withTarget(collector.dataFile(), "/v1/traces").get(0);
            assertTrue(row.idempotencyKey().orElseThrow().startsWith("relay-"),
                    "stored under the key the relay computed: " + row.idempotencyKey());
            assertTrue(contains(row.body(), spanName));
        }
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aGzipSpanExportThroughARelayReachesTheCollectorByteForByte(Sender sender) throws IOException {
        String spanName = "relayed gzip span " + UUID.randomUUID();
        Collection<SpanData> spans = TELEMETRY.spans(spanName);
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"));
             Relay relay = relayInFrontOf(collector)) {
            String relayEndpoint = relay.endpoint("/v1/traces");
            assertExported(sender, relayEndpoint, "gzip", spans);
            await().atMost(PATIENCE).until(() -> stats(collector).batches() == 1);
            assertExported(sender, collector.uri("/v1/traces?direct").toString(), "none", spans);

            Row relayed = StoredBatches.withTarget(collector.dataFile(), "/v1/traces").get(0);
            Row direct = StoredBatches.withTarget(collector.dataFile(), "/v1/traces?direct").get(0);
            assertEquals("gzip", relayed.contentEncoding(), "the relay forwards the body still compressed");
            assertArrayEquals(direct.body(), gunzip(relayed.body()),
                    "what reached the collector through the relay gunzips to what the exporter sends directly");
        }
    }
}
