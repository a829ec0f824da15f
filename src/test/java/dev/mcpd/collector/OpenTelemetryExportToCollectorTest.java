package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.stats;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.CollectorHttp.Stats;
import dev.mcpd.collector.StoredBatches.Row;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.relay.RelayApplication;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real client, the OpenTelemetry Java SDK's OTLP/HTTP span exporter (over each of its two HTTP senders), exports
 * to the collector directly, and through a relay in front of it (SPEC §0: senders → relay → collector).
 */
class OpenTelemetryExportToCollectorTest {

    static final long START_NANOS = 1_764_000_000_000_000_000L;
    static final long END_NANOS = START_NANOS + 42_000_000L;
    static final Duration PATIENCE = Duration.ofSeconds(30);
    static final Resource RESOURCE = Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), "mcpd-collector-exporter-test"));
    static final Clock FIXED_CLOCK = new Clock() {
        @Override
        public long now() {
            return END_NANOS;
        }

        @Override
        public long nanoTime() {
            return END_NANOS;
        }
    };

    /** The SDK's two HTTP senders, chosen by the property the exporter's builder reads in build(). */
    enum Sender {
        OKHTTP("io.opentelemetry.exporter.sender.okhttp.internal.OkHttpHttpSenderProvider"),
        JDK("io.opentelemetry.exporter.sender.jdk.internal.JdkHttpSenderProvider");

        static final String SELECTING_PROPERTY = "io.opentelemetry.sdk.common.export.HttpSenderProvider";

        final String providerClass;

        Sender(String providerClass) {
            this.providerClass = providerClass;
        }

        <T> T build(Supplier<T> building) {
            synchronized (Sender.class) {
                String before = System.getProperty(SELECTING_PROPERTY);
                System.setProperty(SELECTING_PROPERTY, providerClass);
                try {
                    return building.get();
                } finally {
                    if (before == null) {
                        System.clearProperty(SELECTING_PROPERTY);
                    } else {
                        System.setProperty(SELECTING_PROPERTY, before);
                    }
                }
            }
        }

        /** Exports the spans once to the endpoint, with the compression ("none" or "gzip"); the result. */
        CompletableResultCode export(String endpoint, String compression, Collection<SpanData> spans) {
            OtlpHttpSpanExporter exporter = build(() -> OtlpHttpSpanExporter.builder()
                    .setEndpoint(endpoint).setCompression(compression).build());
            try {
                return exporter.export(spans).join(15, SECONDS);
            } finally {
                exporter.shutdown().join(10, SECONDS);
            }
        }
    }

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
        int port = RunningCollector.freePort();
        return new Relay(RelayApplication.start(McpdConfig.fromEnvironment(Map.of(
                "MCPD_LISTEN", "127.0.0.1:" + port,
                "MCPD_DATA", dir.resolve("relay").resolve("mcpd.db").toString(),
                "MCPD_UPSTREAMS", collector.baseUrl()))), port);
    }

    private static void assertSucceeded(CompletableResultCode result) {
        assertTrue(result.isDone(), "the export finished in time");
        assertTrue(result.isSuccess(), () -> "the export succeeded; failure: " + result.getFailureThrowable());
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aSpanExportedToTheCollectorSucceedsAndIsStoredAsOneBatch(Sender sender) {
        String spanName = "collector-test span " + UUID.randomUUID();
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            Stats before = stats(collector);

            assertSucceeded(sender.export(collector.uri("/v1/traces").toString(), "none", spans(spanName)));

            assertEquals(new Stats(before.batches() + 1, before.events() + 1, before.duplicates()), stats(collector));
            List<Row> rows = StoredBatches.withTarget(collector.dataFile(), "/v1/traces");
            assertEquals(1, rows.size());
            assertEquals("application/x-protobuf", rows.get(0).contentType());
            assertTrue(contains(rows.get(0).body(), spanName.getBytes(StandardCharsets.UTF_8)),
                    "the stored protobuf carries the span's name");
        }
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aGzipSpanExportToTheCollectorIsStoredCompressedAsSent(Sender sender) throws IOException {
        String spanName = "collector-test gzip span " + UUID.randomUUID();
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            assertSucceeded(sender.export(collector.uri("/v1/traces").toString(), "gzip", spans(spanName)));

            List<Row> rows = StoredBatches.withTarget(collector.dataFile(), "/v1/traces");
            assertEquals(1, rows.size());
            assertEquals("gzip", rows.get(0).contentEncoding());
            assertTrue(contains(gunzip(rows.get(0).body()), spanName.getBytes(StandardCharsets.UTF_8)),
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

            assertSucceeded(sender.export(relayEndpoint, "none", spans(spanName)));

            await().atMost(PATIENCE).until(() -> stats(collector).batches() == before.batches() + 1);
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(new Stats(before.batches() + 1, before.events() + 1, before.duplicates()), stats(collector),
                    "delivered once, not doubled");
            Row row = StoredBatches.withTarget(collector.dataFile(), "/v1/traces").get(0);
            assertTrue(row.idempotencyKey().orElseThrow().startsWith("relay-"),
                    "stored under the key the relay computed: " + row.idempotencyKey());
            assertTrue(contains(row.body(), spanName.getBytes(StandardCharsets.UTF_8)));
        }
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void aGzipSpanExportThroughARelayReachesTheCollectorByteForByte(Sender sender) throws IOException {
        String spanName = "relayed gzip span " + UUID.randomUUID();
        Collection<SpanData> spans = spans(spanName);
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"));
             Relay relay = relayInFrontOf(collector)) {
            String relayEndpoint = relay.endpoint("/v1/traces");
            assertSucceeded(sender.export(relayEndpoint, "gzip", spans));
            await().atMost(PATIENCE).until(() -> stats(collector).batches() == 1);
            assertSucceeded(sender.export(collector.uri("/v1/traces?direct").toString(), "none", spans));

            Row relayed = StoredBatches.withTarget(collector.dataFile(), "/v1/traces").get(0);
            Row direct = StoredBatches.withTarget(collector.dataFile(), "/v1/traces?direct").get(0);
            assertEquals("gzip", relayed.contentEncoding(), "the relay forwards the body still compressed");
            assertArrayEquals(direct.body(), gunzip(relayed.body()),
                    "what reached the collector through the relay gunzips to what the exporter sends directly");
        }
    }

    // ---- telemetry built by the SDK, with a fixed clock and fixed ids ----

    static Collection<SpanData> spans(String spanName) {
        List<SpanData> collected = new ArrayList<>();
        SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
                .setResource(RESOURCE)
                .setClock(FIXED_CLOCK)
                .setIdGenerator(new IdGenerator() {
                    @Override
                    public String generateSpanId() {
                        return "b7ad6b7169203331";
                    }

                    @Override
                    public String generateTraceId() {
                        return "0af7651916cd43dd8448eb211c80319c";
                    }
                })
                .addSpanProcessor(SimpleSpanProcessor.create(collecting(collected)))
                .build();
        try {
            Span span = tracerProvider.get("dev.mcpd.collector.test", "1.0.0").spanBuilder(spanName)
                    .setSpanKind(SpanKind.CLIENT)
                    .setStartTimestamp(START_NANOS, NANOSECONDS)
                    .setAttribute("http.request.method", "POST")
                    .startSpan();
            span.end(END_NANOS, NANOSECONDS);
        } finally {
            tracerProvider.shutdown().join(10, SECONDS);
        }
        assertEquals(1, collected.size());
        return List.copyOf(collected);
    }

    static SpanExporter collecting(List<SpanData> into) {
        return new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
                into.addAll(spans);
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
    }

    static byte[] gunzip(byte[] gzipped) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gzipped))) {
            return in.readAllBytes();
        }
    }

    static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
