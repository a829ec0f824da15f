package dev.mcpd.relay;

import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.exporter.otlp.http.logs.OtlpHttpLogRecordExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.logs.LogRecordProcessor;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.logs.export.LogRecordExporter;
import io.opentelemetry.sdk.logs.export.SimpleLogRecordProcessor;
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
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SPEC §2 with a real client: the OpenTelemetry Java SDK's OTLP/HTTP exporters, over each of the SDK's two HTTP
 * senders, export traces, logs and metrics to the relay, uncompressed and gzip-compressed, and the spool holds the
 * bytes they sent.
 *
 * <p>The exporters' protobuf is deterministic for the same data, so every test collects its telemetry once (fixed
 * clock, fixed ids) and exports the very same data twice: the gzip entry must gunzip to the uncompressed entry's body.
 *
 * <p>Every export goes through a {@link WireTap} in front of the relay, which records what the client wrote, so each
 * run checks on the wire that the sender it names really sent the request.
 */
class OpenTelemetryExporterTest {

    /** Fixed time for every piece of telemetry: 2025-11-24T16:00:00Z, in epoch nanoseconds. */
    static final long START_NANOS = 1_764_000_000_000_000_000L;
    static final long END_NANOS = START_NANOS + 42_000_000L;
    static final Resource RESOURCE = Resource.create(
            Attributes.of(AttributeKey.stringKey("service.name"), "mcpd-relay-exporter-test"));
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

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay();



    /**
     * The SDK's two HTTP senders. With both on the classpath (as here) the exporter's builder loads every
     * {@code HttpSenderProvider} by ServiceLoader when {@code build()} runs, and picks the one whose class name the
     * system property (or environment variable) {@code io.opentelemetry.sdk.common.export.HttpSenderProvider} names;
     * without it, it logs "Multiple HttpSenderProvider found" and takes whichever came first.
     */
    enum Sender {
        OKHTTP("io.opentelemetry.exporter.sender.okhttp.internal.OkHttpHttpSenderProvider") {
            /** OkHttp speaks plain HTTP/1.1 to a cleartext endpoint and never offers an upgrade. */
            @Override
            void assertSentTheRequests(String clientBytes, String path) {
                assertTrue(clientBytes.contains("POST " + path + " HTTP/1.1\r\n"), "an HTTP/1.1 request on the wire");
                assertTrue(!clientBytes.toLowerCase(Locale.ROOT).contains("\r\nupgrade:"),
                        "the OkHttp sender offers no protocol upgrade; this run used another sender:\n" + clientBytes);
            }
        },
        JDK("io.opentelemetry.exporter.sender.jdk.internal.JdkHttpSenderProvider") {
            /** The JDK HttpClient (HTTP/2 by default) opens a cleartext connection with an h2c upgrade request. */
            @Override
            void assertSentTheRequests(String clientBytes, String path) {
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

        abstract void assertSentTheRequests(String clientBytes, String path);
    }

    /** Builds an exporter for the endpoint with the compression ("none" or "gzip"), exports once, shuts it down. */
    @FunctionalInterface
    interface ExportOnce {
        CompletableResultCode export(String endpoint, String compression);
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void spansExportedPlainAndGzippedAreAcceptedAndSpooledByteForByte(Sender sender) throws Exception {
        String spanName = "relay-test span sent by " + sender;
        Collection<SpanData> spans = spans(spanName);

        Exported exported = exportPlainThenGzip(sender, "/v1/traces", (endpoint, compression) -> {
            OtlpHttpSpanExporter exporter = sender.build(() -> OtlpHttpSpanExporter.builder()
                    .setEndpoint(endpoint).setCompression(compression).build());
            try {
                return exporter.export(spans).join(10, SECONDS);
            } finally {
                exporter.shutdown().join(10, SECONDS);
            }
        });

        exported.assertTheSameProtobufCarrying(spanName);
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void logRecordsExportedPlainAndGzippedAreAcceptedAndSpooledByteForByte(Sender sender) throws Exception {
        String logBody = "relay-test log record sent by " + sender;
        Collection<LogRecordData> logs = logRecords(logBody);

        Exported exported = exportPlainThenGzip(sender, "/v1/logs", (endpoint, compression) -> {
            OtlpHttpLogRecordExporter exporter = sender.build(() -> OtlpHttpLogRecordExporter.builder()
                    .setEndpoint(endpoint).setCompression(compression).build());
            try {
                return exporter.export(logs).join(10, SECONDS);
            } finally {
                exporter.shutdown().join(10, SECONDS);
            }
        });

        exported.assertTheSameProtobufCarrying(logBody);
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void metricsExportedPlainAndGzippedAreAcceptedAndSpooledByteForByte(Sender sender) throws Exception {
        String metricName = "relay_test_requests_sent_by_" + sender.name().toLowerCase(Locale.ROOT);
        Collection<MetricData> metrics = counterMetrics(metricName);

        Exported exported = exportPlainThenGzip(sender, "/v1/metrics", (endpoint, compression) -> {
            OtlpHttpMetricExporter exporter = sender.build(() -> OtlpHttpMetricExporter.builder()
                    .setEndpoint(endpoint).setCompression(compression).build());
            try {
                return exporter.export(metrics).join(10, SECONDS);
            } finally {
                exporter.shutdown().join(10, SECONDS);
            }
        });

        exported.assertTheSameProtobufCarrying(metricName);
    }

    // ---- exporting and what the spool then holds ----

    /** The entries one uncompressed and one gzip export of the same data left in the spool. */
    record Exported(String path, SpoolRequest plain, SpoolRequest gzip) {

        void assertTheSameProtobufCarrying(String text) throws IOException {
            assertEquals(path, plain.target());
            assertEquals(path, gzip.target());
            assertEquals("application/x-protobuf", plain.contentType());
            assertEquals("application/x-protobuf", gzip.contentType());
            assertEquals("", plain.contentEncoding(), "the uncompressed export has no content encoding");
            assertTrue(contains(plain.body(), text.getBytes(StandardCharsets.UTF_8)),
                    "the protobuf carries \"" + text + "\"");

            assertEquals("gzip", gzip.contentEncoding());
            assertTrue(gzip.body().length >= 2 && gzip.body()[0] == 0x1f && gzip.body()[1] == (byte) 0x8b,
                    "the gzip entry is stored compressed, as sent");
            assertArrayEquals(plain.body(), gunzip(gzip.body()),
                    "the gzip entry gunzips to exactly the uncompressed export's bytes");
        }
    }

    /** Exports the same data uncompressed, then gzip-compressed, each through a wire tap in front of the relay. */
    static Exported exportPlainThenGzip(Sender sender, String path, ExportOnce exportOnce) throws IOException {
        try (WireTap tap = WireTap.to(relay.port())) {
            SpoolRequest plain = theOneEntryAddedBy(() -> exportOnce.export(tap.uri(path), "none"), "plain " + path);
            SpoolRequest gzip = theOneEntryAddedBy(() -> exportOnce.export(tap.uri(path), "gzip"), "gzip " + path);
            sender.assertSentTheRequests(tap.clientBytes(), path);
            return new Exported(path, plain, gzip);
        }
    }

    /** Runs one export, which must succeed, and returns the single entry it added to the spool. */
    static SpoolRequest theOneEntryAddedBy(Supplier<CompletableResultCode> export, String what) {
        long lastBefore = relay.spooled().stream().mapToLong(SpoolEntry::seq).max().orElse(Long.MIN_VALUE);
        CompletableResultCode result = export.get();
        assertTrue(result.isDone(), what + ": the export finished within 10 s");
        assertTrue(result.isSuccess(), what + ": the export succeeded; failure: " + result.getFailureThrowable());
        List<SpoolEntry> added = relay.spooled().stream().filter(e -> e.seq() > lastBefore).toList();
        assertEquals(1, added.size(), what + ": one export, one spooled request: " + added);
        return added.get(0).request();
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
            Span span = tracerProvider.get("dev.mcpd.relay.test", "1.0.0").spanBuilder(spanName)
                    .setSpanKind(SpanKind.CLIENT)
                    .setStartTimestamp(START_NANOS, NANOSECONDS)
                    .setAttribute("http.request.method", "POST")
                    .startSpan();
            span.addEvent("sent", Attributes.of(AttributeKey.longKey("bytes"), 1234L), START_NANOS + 1_000L, NANOSECONDS);
            span.end(END_NANOS, NANOSECONDS);
        } finally {
            tracerProvider.shutdown().join(10, SECONDS);
        }
        assertEquals(1, collected.size());
        return List.copyOf(collected);
    }

    static Collection<LogRecordData> logRecords(String body) {
        List<LogRecordData> collected = new ArrayList<>();
        LogRecordProcessor processor = SimpleLogRecordProcessor.create(new LogRecordExporter() {
            @Override
            public CompletableResultCode export(Collection<LogRecordData> logs) {
                collected.addAll(logs);
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
        });
        SdkLoggerProvider loggerProvider = SdkLoggerProvider.builder()
                .setResource(RESOURCE).setClock(FIXED_CLOCK).addLogRecordProcessor(processor).build();
        try {
            loggerProvider.get("dev.mcpd.relay.test").logRecordBuilder()
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
    static Collection<MetricData> counterMetrics(String name) {
        OnDemandReader reader = new OnDemandReader();
        SdkMeterProvider meterProvider = SdkMeterProvider.builder()
                .setResource(RESOURCE).setClock(FIXED_CLOCK).registerMetricReader(reader).build();
        try {
            var counter = meterProvider.get("dev.mcpd.relay.test").counterBuilder(name)
                    .setDescription("requests the test sent").setUnit("{request}").build();
            counter.add(3, Attributes.of(AttributeKey.stringKey("path"), "/v1/metrics"));
            counter.add(4, Attributes.of(AttributeKey.stringKey("path"), "/v1/metrics"));
            Collection<MetricData> metrics = List.copyOf(reader.registration.collectAllMetrics());
            assertEquals(1, metrics.size());
            MetricData metric = metrics.iterator().next();
            assertEquals(name, metric.getName());
            assertEquals(InstrumentationScopeInfo.create("dev.mcpd.relay.test"), metric.getInstrumentationScopeInfo());
            assertEquals(7L, metric.getLongSumData().getPoints().iterator().next().getValue());
            return metrics;
        } finally {
            meterProvider.shutdown().join(10, SECONDS);
        }
    }

    static final class OnDemandReader implements MetricReader {
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

    // ---- bytes ----

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

    /**
     * A TCP pass-through on a loopback port in front of the relay: it forwards bytes both ways untouched and keeps
     * what the clients wrote, so a test can see which HTTP client was talking.
     */
    static final class WireTap implements AutoCloseable {
        private final ServerSocket server;
        private final int targetPort;
        private final List<Socket> sockets = new ArrayList<>();
        private final ByteArrayOutputStream fromClients = new ByteArrayOutputStream();

        private WireTap(ServerSocket server, int targetPort) {
            this.server = server;
            this.targetPort = targetPort;
        }

        static WireTap to(int targetPort) throws IOException {
            WireTap tap = new WireTap(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), targetPort);
            Thread acceptor = new Thread(tap::acceptLoop, "wire-tap-accept");
            acceptor.setDaemon(true);
            acceptor.start();
            return tap;
        }

        String uri(String path) {
            return "http://127.0.0.1:" + server.getLocalPort() + path;
        }

        /** Everything the clients wrote so far, as ISO-8859-1 text (HTTP/1.1 heads read as they were sent). */
        String clientBytes() {
            synchronized (fromClients) {
                return fromClients.toString(StandardCharsets.ISO_8859_1);
            }
        }

        private void acceptLoop() {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                    synchronized (sockets) {
                        sockets.add(client);
                        sockets.add(upstream);
                    }
                    pump(client, upstream, true);
                    pump(upstream, client, false);
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void pump(Socket from, Socket to, boolean record) {
            Thread thread = new Thread(() -> {
                byte[] buffer = new byte[8192];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                        if (record) {
                            synchronized (fromClients) {
                                fromClients.write(buffer, 0, n);
                            }
                        }
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                } catch (IOException e) {
                    // the other side went away: closing both ends below ends the connection
                } finally {
                    closeQuietly(from);
                    closeQuietly(to);
                }
            }, "wire-tap-pump");
            thread.setDaemon(true);
            thread.start();
        }

        private static void closeQuietly(Socket socket) {
            try {
                socket.close();
            } catch (IOException e) {
                // already closed
            }
        }

        @Override
        public void close() {
            try {
                server.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                synchronized (sockets) {
                    sockets.forEach(WireTap::closeQuietly);
                }
            }
        }
    }
}
