package dev.mcpd.relay;

import static dev.mcpd.testing.GrpcClient.framed;
import static dev.mcpd.testing.OtlpTelemetry.contains;
import static dev.mcpd.testing.OtlpTelemetry.gunzip;
import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.GrpcClient;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.OtlpTelemetry.Grpc;
import dev.mcpd.testing.OtlpTelemetry.Sender;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.testing.TestTuning;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * OTLP/gRPC on the relay's own port: OTLP/gRPC Export calls — from the OpenTelemetry Java SDK's gRPC exporters and,
 * for the exact answers, from a byte-level gRPC client — are spooled as the OTLP/HTTP request they stand for and
 * answered in gRPC's terms; every other call is refused with nothing written.
 */
class GrpcIngestTest {

    static final OtlpTelemetry TELEMETRY = new OtlpTelemetry("mcpd-relay-grpc-test", "dev.mcpd.relay.grpc");

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay();


    String endpoint() {
        return "http://127.0.0.1:" + relay.port();
    }

    // ---- the SDK's exporters ----

    @Test
    void spansExportedOverGrpcAreSpooledAsTheOtlpHttpRequestWithItsKey() throws Exception {
        var spans = TELEMETRY.spans("span sent over grpc");
        SpoolRequest overGrpc = theOneEntryAddedBy(() -> Grpc.exportSpans(endpoint(), "none", Map.of(), spans, 10));
        SpoolRequest overHttp = theOneEntryAddedBy(() -> Sender.OKHTTP.exportSpans(relay.uri("/v1/traces").toString(),
                "none", spans, 10));

        assertEquals("POST", overGrpc.method());
        assertEquals("/v1/traces", overGrpc.target());
        assertEquals("application/x-protobuf", overGrpc.contentType());
        assertEquals("", overGrpc.contentEncoding());
        assertTrue(contains(overGrpc.body(), "span sent over grpc"));
        assertArrayEquals(overHttp.body(), overGrpc.body(), "the message bytes exactly, as OTLP/HTTP sends them");
        assertEquals(overHttp.idempotencyKey(), overGrpc.idempotencyKey(),
                "the same export over gRPC and over HTTP gets the same key");

        SpoolRequest gzipped = theOneEntryAddedBy(() -> Grpc.exportSpans(endpoint(), "gzip", Map.of(), spans, 10));
        assertEquals("/v1/traces", gzipped.target());
        assertEquals("gzip", gzipped.contentEncoding(), "a gzip-encoded message is kept compressed");
        assertArrayEquals(overGrpc.body(), gunzip(gzipped.body()));
    }

    @Test
    void metricsAndLogsExportedOverGrpcPlainAndGzippedAreSpooledUnderTheirPaths() throws Exception {
        var metrics = TELEMETRY.counterMetrics("relay_grpc_test_requests");
        var logs = TELEMETRY.logRecords("log record sent over grpc");
        SpoolRequest plainMetrics = theOneEntryAddedBy(
                () -> Grpc.exportMetrics(endpoint(), "none", Map.of(), metrics, 10));
        SpoolRequest gzipMetrics = theOneEntryAddedBy(
                () -> Grpc.exportMetrics(endpoint(), "gzip", Map.of(), metrics, 10));
        SpoolRequest plainLogs = theOneEntryAddedBy(() -> Grpc.exportLogs(endpoint(), "none", Map.of(), logs, 10));
        SpoolRequest gzipLogs = theOneEntryAddedBy(() -> Grpc.exportLogs(endpoint(), "gzip", Map.of(), logs, 10));

        assertEquals("/v1/metrics", plainMetrics.target());
        assertTrue(contains(plainMetrics.body(), "relay_grpc_test_requests"));
        assertEquals("gzip", gzipMetrics.contentEncoding());
        assertArrayEquals(plainMetrics.body(), gunzip(gzipMetrics.body()));
        assertEquals("/v1/logs", plainLogs.target());
        assertTrue(contains(plainLogs.body(), "log record sent over grpc"));
        assertEquals("application/x-protobuf", gzipLogs.contentType());
        assertArrayEquals(plainLogs.body(), gunzip(gzipLogs.body()));
    }

    // ---- the answers, read byte for byte ----

    @Test
    void anExportCallIsAnsweredOkWithAnEmptyResponseInTheTrailers() {
        byte[] message = "a protobuf message".getBytes(StandardCharsets.UTF_8);
        GrpcClient.Reply reply = relay.grpc().call(GrpcClient.LOGS, Map.of(), framed(message));

        assertEquals(200, reply.httpStatus());
        assertEquals("application/grpc", reply.headers().get("content-type"));
        assertEquals("0", reply.trailers().get("grpc-status"), "OK, in the trailers");
        assertArrayEquals(new byte[5], reply.body(), "one empty Export*ServiceResponse behind its prefix");
        assertEquals("spooled", reply.headers().get("mcpd-relay"));
        assertTrue(relay.spooled().stream().anyMatch(e -> Arrays.equals(message, e.request().body())));
    }

    @Test
    void theIdempotencyKeyMetadataIsTheEntrysKey() {
        byte[] message = "keyed over grpc".getBytes(StandardCharsets.UTF_8);
        assertEquals(0, relay.grpc().call(GrpcClient.TRACES, Map.of("idempotency-key", "grpc-key-1"), framed(message))
                .grpcStatus());
        assertEquals("grpc-key-1", entryWith(message).idempotencyKey());
    }

    @Test
    void aMessageGzipEncodedByTheSenderIsKeptAsSentWithItsEncoding() throws Exception {
        byte[] message = "compressed over grpc".getBytes(StandardCharsets.UTF_8);
        byte[] compressed = gzip(message);
        assertEquals(0, relay.grpc().call(GrpcClient.METRICS, Map.of("grpc-encoding", "gzip"), framed(1, compressed))
                .grpcStatus());
        SpoolRequest entry = relay.spooled().stream().map(SpoolEntry::request)
                .filter(r -> Arrays.equals(compressed, r.body())).findFirst().orElseThrow();
        assertEquals("gzip", entry.contentEncoding());
        assertEquals("/v1/metrics", entry.target());

        // grpc-encoding names what a compressed message is in; an uncompressed one under it is kept as it is
        byte[] plain = "uncompressed under grpc-encoding gzip".getBytes(StandardCharsets.UTF_8);
        assertEquals(0, relay.grpc().call(GrpcClient.METRICS, Map.of("grpc-encoding", "gzip"), framed(0, plain))
                .grpcStatus());
        assertEquals("", entryWith(plain).contentEncoding());
    }

    @Test
    void anotherMethodIsUnimplementedAndNothingIsWritten() {
        int before = relay.spooled().size();
        GrpcClient.Reply reply = relay.grpc().call("/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
                Map.of(), framed("profile".getBytes(StandardCharsets.UTF_8)));
        assertEquals(12, reply.grpcStatus(), "UNIMPLEMENTED");
        assertTrue(reply.grpcMessage().contains("unknown gRPC method"), reply.grpcMessage());
        assertEquals(12, relay.grpc().call("/grpc.health.v1.Health/Check", Map.of(), framed(new byte[0])).grpcStatus());
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void malformedFramingIsInvalidArgumentAndNothingIsWritten() {
        int before = relay.spooled().size();
        byte[] message = "m".repeat(10).getBytes(StandardCharsets.UTF_8);
        byte[] twoMessages = new byte[2 * (5 + message.length)];
        System.arraycopy(framed(message), 0, twoMessages, 0, 5 + message.length);
        System.arraycopy(framed(message), 0, twoMessages, 5 + message.length, 5 + message.length);
        byte[] shortOfItsLength = Arrays.copyOf(framed(message), 5 + message.length - 3);
        byte[] hugeLength = framed(message);
        ByteBuffer.wrap(hugeLength).putInt(1, -1); // 4 GiB - 1 declared on 10 bytes
        Map<String, byte[]> bodies = new LinkedHashMap<>();
        bodies.put("an empty body", new byte[0]);
        bodies.put("2 bytes, no prefix", new byte[] {0, 0});
        bodies.put("two messages in a unary call", twoMessages);
        bodies.put("a message shorter than its length prefix", shortOfItsLength);
        bodies.put("compressed flag 2", framed(2, message));
        bodies.put("a compressed message without grpc-encoding", framed(1, gzip(message)));
        bodies.put("a length prefix of 4 GiB on 10 bytes", hugeLength);

        List<String> observed = new ArrayList<>();
        boolean all = true;
        for (Map.Entry<String, byte[]> body : bodies.entrySet()) {
            GrpcClient.Reply reply = relay.grpc().call(GrpcClient.TRACES, Map.of(), body.getValue());
            int expected = body.getKey().startsWith("a length prefix of 4 GiB") ? 8 : 3;
            observed.add(body.getKey() + " → " + reply.grpcStatus() + " " + reply.grpcMessage());
            all &= reply.httpStatus() == 200 && reply.grpcStatus() == expected
                    && reply.grpcMessage().lines().count() == 1 && !reply.grpcMessage().contains("Exception");
        }
        int after = relay.spooled().size();
        ReliabilityReport.assertHostile("g1", "OTLP/gRPC Export calls whose framing cannot be read: "
                        + String.join(", ", bodies.keySet()),
                "INVALID_ARGUMENT (3) each, RESOURCE_EXHAUSTED (8) for the 4 GiB length, with a one-line"
                        + " grpc-message; nothing spooled",
                String.join("; ", observed) + (after == before ? "; nothing spooled" : "; SPOOLED"),
                all && after == before);
    }

    @Test
    void aCompressedMessageInAnEncodingNotSupportedIsUnimplemented() {
        int before = relay.spooled().size();
        GrpcClient.Reply reply = relay.grpc().call(GrpcClient.TRACES, Map.of("grpc-encoding", "snappy"),
                framed(1, new byte[] {1, 2, 3}));
        assertEquals(12, reply.grpcStatus(), reply.grpcMessage());
        assertEquals("gzip", reply.headers().get("grpc-accept-encoding"));
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void aGrpcContentTypeOverHttp11IsNotAGrpcCallAndIsRefused400() throws Exception {
        int before = relay.spooled().size();
        String answer;
        try (RawHttp http = new RawHttp(relay.port(), 5_000)) {
            answer = http.send("POST " + GrpcClient.TRACES + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/grpc\r\nContent-Length: 5\r\n\r\n\0\0\0\0\0").readResponse();
        }
        assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
        assertTrue(answer.contains("carried by HTTP/2"), answer);
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void answersAreCountedByProtocolAndOutcome() throws Exception {
        double acceptedBefore = ingestRequests("grpc", "accepted");
        double refusedBefore = ingestRequests("grpc", "refused");
        double httpBefore = ingestRequests("http", "accepted");

        assertEquals(0, relay.grpc().call(GrpcClient.TRACES, Map.of(), framed(new byte[] {1})).grpcStatus());
        assertEquals(12, relay.grpc().call("/x.Y/Z", Map.of(), framed(new byte[] {1})).grpcStatus());

        assertEquals(acceptedBefore + 1, ingestRequests("grpc", "accepted"));
        assertEquals(refusedBefore + 1, ingestRequests("grpc", "refused"));
        assertEquals(httpBefore, ingestRequests("http", "accepted"), "no HTTP request was counted");
    }

    static double ingestRequests(String protocol, String outcome) throws Exception {
        String text = TestTuning.HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
        return Scrape.of(text).value("mcpd_ingest_requests_total{outcome=\"" + outcome + "\",protocol=\"" + protocol
                + "\"}").orElseThrow(() -> new AssertionError("no mcpd_ingest_requests_total sample:\n" + text));
    }

    // ---- helpers ----

    static SpoolRequest entryWith(byte[] body) {
        return relay.spooled().stream().map(SpoolEntry::request).filter(r -> Arrays.equals(body, r.body()))
                .findFirst().orElseThrow(() -> new AssertionError("no spooled entry with that body"));
    }

    static SpoolRequest theOneEntryAddedBy(Supplier<CompletableResultCode> export) {
        long lastBefore = relay.spooled().stream().mapToLong(SpoolEntry::seq).max().orElse(Long.MIN_VALUE);
        CompletableResultCode result = export.get();
        assertTrue(result.isSuccess(), "the export succeeded; failure: " + result.getFailureThrowable());
        List<SpoolEntry> added = relay.spooled().stream().filter(e -> e.seq() > lastBefore).toList();
        assertEquals(1, added.size(), "one export, one spooled request: " + added);
        return added.get(0).request();
    }
}
