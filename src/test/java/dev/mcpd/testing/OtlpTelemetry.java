package dev.mcpd.testing;

import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.exporter.otlp.http.logs.OtlpHttpLogRecordExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.logs.OtlpGrpcLogRecordExporter;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Telemetry built by the OpenTelemetry Java SDK with a fixed clock and fixed ids (so its protobuf is the same every
 * time), the SDK's two OTLP/HTTP senders to export it with, and byte helpers to look into what was stored.
 *
 * <p>{@code new OtlpTelemetry(serviceName, scopeName)} names the resource ({@code service.name}) and the
 * instrumentation scope of everything it builds.
 */
public final class OtlpTelemetry {

    /** Fixed time for every piece of telemetry: 2025-11-24T16:00:00Z, in epoch nanoseconds. */
    public static final long START_NANOS = 1_764_000_000_000_000_000L;
    public static final long END_NANOS = START_NANOS + 42_000_000L;
    public static final Clock FIXED_CLOCK = new Clock() {
        @Override
        public long now() {
            return END_NANOS;
        }

        @Override
        public long nanoTime() {
            return END_NANOS;
        }
    };

    private final Resource resource;
    private final String scopeName;

    public OtlpTelemetry(String serviceName, String scopeName) {
        this.resource = Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), serviceName));
        this.scopeName = scopeName;
    }

    /**
     * The SDK's two HTTP senders. With both on the classpath the exporter's builder loads every
     * {@code HttpSenderProvider} by ServiceLoader when {@code build()} runs, and picks the one whose class name the
     * system property (or environment variable) {@code io.opentelemetry.sdk.common.export.HttpSenderProvider} names;
     * without it, it logs "Multiple HttpSenderProvider found" and takes whichever came first.
     */
    public enum Sender {
        OKHTTP("io.opentelemetry.exporter.sender.okhttp.internal.OkHttpHttpSenderProvider") {
            /** OkHttp speaks plain HTTP/1.1 to a cleartext endpoint and never offers an upgrade. */
            @Override
            public void assertSentTheRequests(String clientBytes, String path) {
                assertTrue(clientBytes.contains("POST " + path + " HTTP/1.1\r\n"), "an HTTP/1.1 request on the wire");
                assertTrue(!clientBytes.toLowerCase(Locale.ROOT).contains("\r\nupgrade:"),
                        "the OkHttp sender offers no protocol upgrade; this run used another sender:\n" + clientBytes);
            }
        },
        JDK("io.opentelemetry.exporter.sender.jdk.internal.JdkHttpSenderProvider") {
            /** The JDK HttpClient (HTTP/2 by default) opens a cleartext connection with an h2c upgrade request. */
            @Override
            public void assertSentTheRequests(String clientBytes, String path) {
                assertTrue(clientBytes.contains("POST " + path + " HTTP/1.1\r\n"), "an HTTP/1.1 request on the wire");
                assertTrue(clientBytes.toLowerCase(Locale.ROOT).contains("\r\nupgrade: h2c\r\n"),
                        "the JDK HttpClient sender asks for an h2c upgrade; this run used another sender:\n"
                                + clientBytes);
            }
        };

        static final String SELECTING_PROPERTY = "io.opentelemetry.sdk.common.export.HttpSenderProvider";

        final String providerClass;

        Sender(String providerClass) {
            this.providerClass = providerClass;
        }

        /** Builds an exporter while the selecting property names this sender; the property is read by build(). */
        public <T> T build(Supplier<T> building) {
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

        /** Checks, on what the client wrote to the wire, that this sender (and no other) sent the request to path. */
        public abstract void assertSentTheRequests(String clientBytes, String path);

        /**
         * Builds a span exporter for the endpoint with the compression ("none" or "gzip"), exports the spans once,
         * waits up to {@code timeoutSeconds} for the result and shuts the exporter down.
         */
        public CompletableResultCode exportSpans(String endpoint, String compression, Collection<SpanData> spans,
                                                 long timeoutSeconds) {
            return exportOnce(() -> OtlpHttpSpanExporter.builder()
                            .setEndpoint(endpoint).setCompression(compression).build(),
                    exporter -> exporter.export(spans), OtlpHttpSpanExporter::shutdown, timeoutSeconds);
        }

        /** As {@link #exportSpans}, for log records. */
        public CompletableResultCode exportLogs(String endpoint, String compression, Collection<LogRecordData> logs,
                                                long timeoutSeconds) {
            return exportOnce(() -> OtlpHttpLogRecordExporter.builder()
                            .setEndpoint(endpoint).setCompression(compression).build(),
                    exporter -> exporter.export(logs), OtlpHttpLogRecordExporter::shutdown, timeoutSeconds);
        }

        /** As {@link #exportSpans}, for metrics. */
        public CompletableResultCode exportMetrics(String endpoint, String compression,
                                                   Collection<MetricData> metrics, long timeoutSeconds) {
            return exportOnce(() -> OtlpHttpMetricExporter.builder()
                            .setEndpoint(endpoint).setCompression(compression).build(),
                    exporter -> exporter.export(metrics), OtlpHttpMetricExporter::shutdown, timeoutSeconds);
        }

        /** Builds an exporter with this sender, exports once, waits for the result, shuts the exporter down. */
        private <E> CompletableResultCode exportOnce(Supplier<E> building,
                                                     Function<E, CompletableResultCode> export,
                                                     Function<E, CompletableResultCode> shutdown,
                                                     long timeoutSeconds) {
            E exporter = build(building);
            try {
                return export.apply(exporter).join(timeoutSeconds, SECONDS);
            } finally {
                shutdown.apply(exporter).join(10, SECONDS);
            }
        }
    }

    /**
     * The SDK's OTLP/gRPC exporters, with its built-in gRPC sender (OkHttp, h2c with prior knowledge to an
     * {@code http://} endpoint; no grpc-java), and their default retry policy: each exports once to
     * {@code endpoint} (scheme, host and port) with the compression ("none" or "gzip") and the metadata, waits up to
     * {@code timeoutSeconds} for the result and shuts the exporter down.
     */
    public static final class Grpc {

        private Grpc() {
        }

        public static CompletableResultCode exportSpans(String endpoint, String compression,
                                                        Map<String, String> metadata, Collection<SpanData> spans,
                                                        long timeoutSeconds) {
            var builder = OtlpGrpcSpanExporter.builder().setEndpoint(endpoint).setCompression(compression)
                    .setTimeout(Duration.ofSeconds(timeoutSeconds));
            metadata.forEach(builder::addHeader);
            return once(builder.build(), e -> e.export(spans), OtlpGrpcSpanExporter::shutdown, timeoutSeconds);
        }

        public static CompletableResultCode exportLogs(String endpoint, String compression,
                                                       Map<String, String> metadata, Collection<LogRecordData> logs,
                                                       long timeoutSeconds) {
            var builder = OtlpGrpcLogRecordExporter.builder().setEndpoint(endpoint).setCompression(compression)
                    .setTimeout(Duration.ofSeconds(timeoutSeconds));
            metadata.forEach(builder::addHeader);
            return once(builder.build(), e -> e.export(logs), OtlpGrpcLogRecordExporter::shutdown, timeoutSeconds);
        }

        public static CompletableResultCode exportMetrics(String endpoint, String compression,
                                                          Map<String, String> metadata,
                                                          Collection<MetricData> metrics, long timeoutSeconds) {
            var builder = OtlpGrpcMetricExporter.builder().setEndpoint(endpoint).setCompression(compression)
                    .setTimeout(Duration.ofSeconds(timeoutSeconds));
            metadata.forEach(builder::addHeader);
            return once(builder.build(), e -> e.export(metrics), OtlpGrpcMetricExporter::shutdown, timeoutSeconds);
        }

        /** Exports once with the exporter, waits for the result, shuts the exporter down. */
        private static <E> CompletableResultCode once(E exporter, Function<E, CompletableResultCode> export,
                                                      Function<E, CompletableResultCode> shutdown,
                                                      long timeoutSeconds) {
            try {
                return export.apply(exporter).join(timeoutSeconds, SECONDS);
            } finally {
                shutdown.apply(exporter).join(10, SECONDS);
            }
        }
    }

    // ---- telemetry built by the SDK, with a fixed clock and fixed ids ----

    /** One client span with this name, started and ended at the fixed times. */
    public Collection<SpanData> spans(String spanName) {
        return spans(spanName, span -> {
        });
    }

    /** One client span with this name; {@code whileOpen} may add to it (events, attributes) before it ends. */
    public Collection<SpanData> spans(String spanName, Consumer<Span> whileOpen) {
        List<SpanData> collected = new ArrayList<>();
        SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
                .setResource(resource)
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
            Span span = tracerProvider.get(scopeName, "1.0.0").spanBuilder(spanName)
                    .setSpanKind(SpanKind.CLIENT)
                    .setStartTimestamp(START_NANOS, NANOSECONDS)
                    .setAttribute("http.request.method", "POST")
                    .startSpan();
            whileOpen.accept(span);
            span.end(END_NANOS, NANOSECONDS);
        } finally {
            tracerProvider.shutdown().join(10, SECONDS);
        }
        assertEquals(1, collected.size());
        return List.copyOf(collected);
    }

    /** One WARN log record with this body. */
    public Collection<LogRecordData> logRecords(String body) {
        List<LogRecordData> collected = new ArrayList<>();
        SdkLoggerProvider loggerProvider = SdkLoggerProvider.builder()
                .setResource(resource).setClock(FIXED_CLOCK)
                .addLogRecordProcessor((context, logRecord) -> collected.add(logRecord.toLogRecordData())).build();
        try {
            loggerProvider.get(scopeName).logRecordBuilder()
                    .setTimestamp(START_NANOS, NANOSECONDS)
                    .setObservedTimestamp(END_NANOS, NANOSECONDS)
                    .setSeverity(Severity.WARN)
                    .setSeverityText("WARN")
                    .setBody(body)
                    .setAttribute(AttributeKey.stringKey("upstream"), "http://127.0.0.1:9")
                    .emit();
        } finally {
            loggerProvider.shutdown().join(10, SECONDS);
        }
        assertEquals(1, collected.size());
        return List.copyOf(collected);
    }

    /** A counter, read once through a metric reader that collects on demand (the SDK's own collection path). */
    public Collection<MetricData> counterMetrics(String name) {
        OnDemandReader reader = new OnDemandReader();
        SdkMeterProvider meterProvider = SdkMeterProvider.builder()
                .setResource(resource).setClock(FIXED_CLOCK).registerMetricReader(reader).build();
        try {
            var counter = meterProvider.get(scopeName).counterBuilder(name)
                    .setDescription("requests the test sent").setUnit("{request}").build();
            counter.add(3, Attributes.of(AttributeKey.stringKey("path"), "/v1/metrics"));
            counter.add(4, Attributes.of(AttributeKey.stringKey("path"), "/v1/metrics"));
            Collection<MetricData> metrics = List.copyOf(reader.registration.collectAllMetrics());
            assertEquals(1, metrics.size());
            MetricData metric = metrics.iterator().next();
            assertEquals(name, metric.getName());
            assertEquals(InstrumentationScopeInfo.create(scopeName), metric.getInstrumentationScopeInfo());
            assertEquals(7L, metric.getLongSumData().getPoints().iterator().next().getValue());
            return metrics;
        } finally {
            meterProvider.shutdown().join(10, SECONDS);
        }
    }

    private static final class OnDemandReader implements MetricReader {
        volatile CollectionRegistration registration = CollectionRegistration.noop();

        @Override
        public void register(CollectionRegistration registration) {
            this.registration = registration;
        }

        @Override
        public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
            return AggregationTemporality.CUMULATIVE;
        }

        @Override
        public CompletableResultCode forceFlush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }

    /** A span exporter that keeps what it is given. */
    private static SpanExporter collecting(List<SpanData> into) {
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

    // ---- bytes ----

    public static byte[] gzip(byte[] plain) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
            out.write(plain);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    public static byte[] gunzip(byte[] gzipped) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gzipped))) {
            return in.readAllBytes();
        }
    }

    /** True when the bytes hold the text's UTF-8 encoding somewhere. */
    public static boolean contains(byte[] haystack, String text) {
        return contains(haystack, text.getBytes(StandardCharsets.UTF_8));
    }

    public static boolean contains(byte[] haystack, byte[] needle) {
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
