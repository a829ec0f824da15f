package dev.mcpd.relay;

import static dev.mcpd.testing.OtlpTelemetry.contains;
import static dev.mcpd.testing.OtlpTelemetry.gunzip;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.OtlpTelemetry.Sender;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.logs.data.LogRecordData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.trace.data.SpanData;
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
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Durable accept with a real client: the OpenTelemetry Java SDK's OTLP/HTTP exporters, over each of the SDK's two HTTP
 * senders ({@link Sender}), export traces, logs and metrics to the relay, uncompressed and gzip-compressed, and the
 * spool holds the bytes they sent.
 *
 * <p>The exporters' protobuf is deterministic for the same data, so every test collects its telemetry once (fixed
 * clock, fixed ids: {@link OtlpTelemetry}) and exports the very same data twice: the gzip entry must gunzip to the
 * uncompressed entry's body.
 *
 * <p>Every export goes through a {@link WireTap} in front of the relay, which records what the client wrote, so each
 * run checks on the wire that the sender it names really sent the request.
 */
class OpenTelemetryExporterTest {

    static final OtlpTelemetry TELEMETRY = new OtlpTelemetry("mcpd-relay-exporter-test", "dev.mcpd.relay.test");

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay();

    /** Builds an exporter for the endpoint with the compression ("none" or "gzip"), exports once, shuts it down. */
    @FunctionalInterface
    interface ExportOnce {
        CompletableResultCode export(String endpoint, String compression);
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void spansExportedPlainAndGzippedAreAcceptedAndSpooledByteForByte(Sender sender) throws Exception {
        String spanName = "relay-test span sent by " + sender;
        Collection<SpanData> spans = TELEMETRY.spans(spanName, span -> span.addEvent("sent",
                Attributes.of(AttributeKey.longKey("bytes"), 1234L), OtlpTelemetry.START_NANOS + 1_000L, NANOSECONDS));

        Exported exported = exportPlainThenGzip(sender, "/v1/traces",
                (endpoint, compression) -> sender.exportSpans(endpoint, compression, spans, 10));

        exported.assertTheSameProtobufCarrying(spanName);
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void logRecordsExportedPlainAndGzippedAreAcceptedAndSpooledByteForByte(Sender sender) throws Exception {
        String logBody = "relay-test log record sent by " + sender;
        Collection<LogRecordData> logs = TELEMETRY.logRecords(logBody);

        Exported exported = exportPlainThenGzip(sender, "/v1/logs",
                (endpoint, compression) -> sender.exportLogs(endpoint, compression, logs, 10));

        exported.assertTheSameProtobufCarrying(logBody);
    }

    @ParameterizedTest(name = "{0} sender")
    @EnumSource(Sender.class)
    void metricsExportedPlainAndGzippedAreAcceptedAndSpooledByteForByte(Sender sender) throws Exception {
        String metricName = "relay_test_requests_sent_by_" + sender.name().toLowerCase(Locale.ROOT);
        Collection<MetricData> metrics = TELEMETRY.counterMetrics(metricName);

        Exported exported = exportPlainThenGzip(sender, "/v1/metrics",
                (endpoint, compression) -> sender.exportMetrics(endpoint, compression, metrics, 10));

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
            assertTrue(contains(plain.body(), text),
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

    // ---- the wire ----

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
