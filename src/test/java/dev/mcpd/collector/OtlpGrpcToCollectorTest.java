package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.GrpcClient.framed;
import static dev.mcpd.testing.OtlpTelemetry.contains;
import static dev.mcpd.testing.OtlpTelemetry.gunzip;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import com.google.rpc.Status;
import dev.mcpd.collector.CollectorHttp.Stats;
import dev.mcpd.collector.StoredBatches.Row;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.testing.GrpcClient;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.OtlpTelemetry.Grpc;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OTLP/gRPC for {@code mcpd serve}, and end to end: the SDK's OTLP/gRPC exporters export to the collector directly and
 * through a relay, and each export is archived once, like the OTLP/HTTP request it stands for: deduplicated by its
 * {@code idempotency-key} metadata, or through a relay by the key the relay gave it.
 */
class OtlpGrpcToCollectorTest {

    static final OtlpTelemetry TELEMETRY = new OtlpTelemetry("mcpd-collector-grpc-test", "dev.mcpd.collector.grpc");

    @TempDir
    Path dir;

    static void assertSucceeded(Supplier<CompletableResultCode> export) {
        CompletableResultCode result = export.get();
        assertTrue(result.isSuccess(), () -> "the export succeeded; failure: " + result.getFailureThrowable());
    }

    static String endpoint(int port) {
        return "http://127.0.0.1:" + port;
    }

    @Test
    void everySignalExportedOverGrpcIsArchivedOnceAsItsOtlpHttpRequest() throws Exception {
        String name = "grpc-" + UUID.randomUUID();
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            int port = collector.uri("/").getPort();
            Stats before = stats(collector);
            assertSucceeded(() -> Grpc.exportSpans(endpoint(port), "none", Map.of(), TELEMETRY.spans(name), 15));
            assertSucceeded(() -> Grpc.exportMetrics(endpoint(port), "gzip", Map.of(),
                    TELEMETRY.counterMetrics("metric_" + name.replace('-', '_')), 15));
            assertSucceeded(() -> Grpc.exportLogs(endpoint(port), "none", Map.of(), TELEMETRY.logRecords(name), 15));

            assertEquals(before.batches() + 3, stats(collector).batches());
            Row spans = StoredBatches.withTarget(collector.dataFile(), "/v1/traces").get(0);
            assertEquals("application/x-protobuf", spans.contentType());
            assertEquals("", spans.contentEncoding());
            assertTrue(contains(spans.body(), name));
            Row metrics = StoredBatches.withTarget(collector.dataFile(), "/v1/metrics").get(0);
            assertEquals("gzip", metrics.contentEncoding(), "stored compressed, as it came");
            assertTrue(contains(gunzip(metrics.body()), "metric_" + name.replace('-', '_')));
            assertTrue(contains(StoredBatches.withTarget(collector.dataFile(), "/v1/logs").get(0).body(), name));
        }
    }

    @Test
    void anExportSentAgainWithItsIdempotencyKeyMetadataIsADuplicate() {
        var spans = TELEMETRY.spans("duplicate " + UUID.randomUUID());
        Map<String, String> key = Map.of("idempotency-key", "export-" + UUID.randomUUID());
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            int port = collector.uri("/").getPort();
            Stats before = stats(collector);
            assertSucceeded(() -> Grpc.exportSpans(endpoint(port), "none", key, spans, 15));
            assertSucceeded(() -> Grpc.exportSpans(endpoint(port), "gzip", key, spans, 15));
            Stats after = stats(collector);
            assertEquals(before.batches() + 1, after.batches(), "archived once");
            assertEquals(before.duplicates() + 1, after.duplicates(), "recognised by its key");

            // without a key, as over OTLP/HTTP, the collector cannot tell a re-send from new data (the relay gives
            // every request a key)
            assertSucceeded(() -> Grpc.exportSpans(endpoint(port), "none", Map.of(), spans, 15));
            assertEquals(after.batches() + 1, stats(collector).batches());
        }
    }

    @Test
    void theCollectorAnswersGrpcRefusalsInGrpcTerms() {
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"),
                Map.of("MCPD_INGEST_KEY", "collector-key"));
             GrpcClient grpc = new GrpcClient(collector.uri("/").getPort())) {
            byte[] message = "m".getBytes(StandardCharsets.UTF_8);
            assertEquals(16, grpc.call(GrpcClient.TRACES, Map.of(), framed(message)).grpcStatus(),
                    "UNAUTHENTICATED");
            assertEquals(12, grpc.call("/grpc.health.v1.Health/Check", Map.of("x-mcpd-key", "collector-key"),
                    framed(message)).grpcStatus(), "UNIMPLEMENTED");
            assertEquals(3, grpc.call(GrpcClient.TRACES, Map.of("x-mcpd-key", "collector-key"), new byte[] {0, 0})
                    .grpcStatus(), "INVALID_ARGUMENT");
            assertEquals(0, stats(collector).batches(), "nothing archived");
            GrpcClient.Reply ok = grpc.call(GrpcClient.TRACES, Map.of("x-mcpd-key", "collector-key"),
                    framed(message));
            assertEquals(0, ok.grpcStatus());
            assertArrayEquals(new byte[5], ok.body(), "an empty ExportTraceServiceResponse");
            assertEquals(1, stats(collector).batches());
        }
    }

    @Test
    void pastTheQuotaACallIsResourceExhaustedWithTheSecondsLeftAsRetryInfo() throws Exception {
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"),
                Map.of("MCPD_QUOTA_PER_MINUTE", "1"));
             GrpcClient grpc = new GrpcClient(collector.uri("/").getPort())) {
            byte[] message = "m".getBytes(StandardCharsets.UTF_8);
            assertEquals(0, grpc.call(GrpcClient.TRACES, Map.of(), framed(message)).grpcStatus());
            GrpcClient.Reply refused = grpc.call(GrpcClient.TRACES, Map.of(), framed(message));
            assertEquals(8, refused.grpcStatus(), "RESOURCE_EXHAUSTED: " + refused.grpcMessage());
            long seconds = Status.parseFrom(refused.statusDetails()).getDetails(0)
                    .unpack(RetryInfo.class).getRetryDelay().getSeconds();
            assertTrue(seconds >= 1 && seconds <= 60, "come back when the minute is over: " + seconds);
            assertEquals(1, stats(collector).batches());
        }
    }

    @Test
    void exportsOverGrpcThroughARelayReachTheCollectorOnceEach() throws Exception {
        String name = "relayed-grpc-" + UUID.randomUUID();
        var spans = TELEMETRY.spans(name);
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            try (RelayApplication relay = RelayApplication.start(McpdConfig.fromEnvironment(Map.of(
                    "MCPD_LISTEN", "127.0.0.1:0",
                    "MCPD_DATA", dir.resolve("relay").resolve("mcpd.db").toString(),
                    "MCPD_UPSTREAMS", collector.baseUrl())))) {
                int relayPort = relay.address().port();
                assertSucceeded(() -> Grpc.exportSpans(endpoint(relayPort), "gzip", Map.of(), spans, 15));
                assertSucceeded(() -> Grpc.exportSpans(endpoint(relayPort), "gzip", Map.of(), spans, 15));
                assertSucceeded(() -> Grpc.exportLogs(endpoint(relayPort), "none", Map.of(),
                        TELEMETRY.logRecords(name), 15));

                await().atMost(PATIENCE).until(() -> relay.spool().entries() == 0);
                Stats after = stats(collector);
                assertEquals(2, after.batches(), "the spans once, the logs once");
                assertEquals(1, after.duplicates(), "the spans sent again: recognised by their key");
                List<Row> traces = StoredBatches.withTarget(collector.dataFile(), "/v1/traces");
                assertEquals("gzip", traces.get(0).contentEncoding());
                assertTrue(contains(gunzip(traces.get(0).body()), name));
                assertTrue(traces.get(0).idempotencyKey().orElseThrow().startsWith("relay-"));
            }
        }
    }
}
