package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Option;
import dev.mcpd.config.Options;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.OtlpTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The README's examples of senders and gateways, run as written: the SDK's autoconfiguration from its variables, the
 * Collector exporters' endpoints, and the relay's command for a Collector gateway.
 */
class SenderExamplesTest {

    private static final String RELAY_HOST = "relay.internal:4317";
    private static final String GATEWAY_RECEIVER = "otel-gateway.internal:4318";
    private static final String GATEWAY_HEALTH = "otel-gateway.internal:13133";

    @TempDir
    Path dir;

    static String example(String name) throws IOException {
        return DocExample.block(Path.of("README.md"), name);
    }

    private static boolean spooledSpan(RunningRelay relay, String spanName) {
        byte[] name = spanName.getBytes(StandardCharsets.UTF_8);
        return relay.spooled().stream().map(SpoolEntry::request).anyMatch(r -> r.target().equals("/v1/traces")
                && OtlpTelemetry.contains(r.body(), name));
    }

    @ParameterizedTest
    @ValueSource(strings = {"http/protobuf", "grpc"})
    void anSdkConfiguredByTheReadmesVariablesSendsItsSpansToTheRelay(String protocol) throws Exception {
        Map<String, String> variables = new LinkedHashMap<>();
        for (String line : example("sdk-environment").strip().split("\n")) {
            variables.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
        }
        assertEquals("http/protobuf", variables.get("OTEL_EXPORTER_OTLP_PROTOCOL"), "the README's protocol");
        variables.put("OTEL_EXPORTER_OTLP_PROTOCOL", protocol); // and the other one its text names
        try (RunningRelay relay = RunningRelay.start(dir.resolve(protocol.replace('/', '-')), Map.of())) {
            Map<String, String> properties = new HashMap<>();
            variables.forEach((name, value) -> properties.put(name.toLowerCase(Locale.ROOT).replace('_', '.'),
                    value.replace(RELAY_HOST, "127.0.0.1:" + relay.port())));
            properties.putAll(Map.of("otel.service.name", "readme", "otel.metrics.exporter", "none",
                    "otel.logs.exporter", "none"));
            OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder().addPropertiesSupplier(() -> properties)
                    .disableShutdownHook().build().getOpenTelemetrySdk();
            String spanName = "readme-sdk-" + protocol;
            try {
                Span span = sdk.getTracer("readme").spanBuilder(spanName).startSpan();
                span.end();
                assertTrue(sdk.getSdkTracerProvider().forceFlush().join(20, SECONDS).isSuccess(),
                        "the SDK's export succeeded");
            } finally {
                sdk.close();
            }
            assertTrue(spooledSpan(relay, spanName), "the span is in the relay's spool");
        }
    }

    @Test
    void theCollectorsExportersEndpointsAreWhereTheRelayTakesTheirRequests() throws Exception {
        Map<?, ?> exporters = (Map<?, ?>) ((Map<?, ?>) new Load(LoadSettings.builder().build())
                .loadFromString(example("collector-exporters"))).get("exporters");
        String http = (String) ((Map<?, ?>) exporters.get("otlphttp")).get("endpoint");
        Map<?, ?> grpc = (Map<?, ?>) exporters.get("otlp");
        assertEquals("http://" + RELAY_HOST, http);
        assertEquals(RELAY_HOST, grpc.get("endpoint"));
        assertEquals(true, ((Map<?, ?>) grpc.get("tls")).get("insecure"), "cleartext, as the relay listens");
        try (RunningRelay relay = RunningRelay.start(dir, Map.of())) {
            String at = "127.0.0.1:" + relay.port();
            OtlpTelemetry telemetry = new OtlpTelemetry("readme", "collector-exporters");
            // otlphttp appends /v1/traces to its endpoint; otlp calls the host and port, in cleartext when insecure.
            assertTrue(exportOnce(OtlpHttpSpanExporter.builder().setEndpoint(http.replace(RELAY_HOST, at)
                    + "/v1/traces").build(), telemetry, "readme-otlphttp").isSuccess());
            assertTrue(exportOnce(OtlpGrpcSpanExporter.builder().setEndpoint("http://" + ((String) grpc
                    .get("endpoint")).replace(RELAY_HOST, at)).build(), telemetry, "readme-otlp").isSuccess());
            assertTrue(spooledSpan(relay, "readme-otlphttp"));
            assertTrue(spooledSpan(relay, "readme-otlp"));
        }
    }

    private static CompletableResultCode exportOnce(SpanExporter exporter, OtlpTelemetry telemetry, String name) {
        try {
            return exporter.export(telemetry.spans(name)).join(20, SECONDS);
        } finally {
            exporter.shutdown().join(10, SECONDS);
        }
    }

    @Test
    void theRelayCommandForAGatewayProbesItsHealthPortAndDeliversToItsReceiver() throws Exception {
        List<String> words = List.of(example("relay-to-gateway").strip().split("\\s+"));
        assertEquals(List.of("mcpd", "relay"), words.subList(0, 2));
        try (TestUpstream receiver = TestUpstream.start().readyStatus(405); // an OTLP receiver answers GET with 405
             TestUpstream health = TestUpstream.start().probePath("/")) {
            Map<Option<?>, List<String>> flags = new HashMap<>();
            for (int i = 2; i < words.size(); i += 2) {
                Option<?> option = switch (words.get(i)) {
                    case "--upstream" -> Options.UPSTREAM;
                    case "--upstream-probe" -> Options.UPSTREAM_PROBE;
                    default -> throw new AssertionError("a flag this test does not know: " + words.get(i));
                };
                flags.computeIfAbsent(option, unused -> new ArrayList<>()).add(words.get(i + 1)
                        .replace(GATEWAY_RECEIVER, "127.0.0.1:" + receiver.port())
                        .replace(GATEWAY_HEALTH, "127.0.0.1:" + health.port()));
            }
            McpdConfig config = McpdConfig.from(flags, Map.of("MCPD_LISTEN", "127.0.0.1:0",
                    "MCPD_DATA", dir.resolve("mcpd.db").toString()));
            try (RunningRelay relay = RunningRelay.start(config, DeliveryTest.FAST.withProbes(
                    Duration.ofMillis(200), Duration.ofSeconds(30)))) {
                await().atMost(PATIENCE).until(() -> !health.probes().isEmpty());
                assertEquals("active", HealthCheckTest.upstream(relay, 1).get("checks").get("mode").asText(),
                        "its health endpoint answers: its probes are checks");
                byte[] export = OtlpMergeDeliveryTest.traces("gateway", "readme-gateway").toByteArray();
                assertEquals(200, post(relay, "/v1/traces", export, "Content-Type", "application/x-protobuf"));
                await().atMost(PATIENCE).until(() -> receiver.received().stream().anyMatch(r -> r.uri()
                        .equals("/v1/traces") && OtlpTelemetry.contains(r.body(), "readme-gateway")));
                assertTrue(receiver.probes().isEmpty(), "the receiver itself is not probed");
            }
        }
    }
}
