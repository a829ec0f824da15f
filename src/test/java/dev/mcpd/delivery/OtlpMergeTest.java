package dev.mcpd.delivery;

import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import dev.mcpd.spool.SpoolRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OtlpMergeTest {

    private static final long LIMIT = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    static ExportTraceServiceRequest traces(String service, String... spans) {
        ScopeSpans.Builder scope = ScopeSpans.newBuilder();
        for (String name : spans) {
            scope.addSpans(Span.newBuilder().setName(name).setTraceId(ByteString.copyFrom(new byte[16]))
                    .setSpanId(ByteString.copyFromUtf8(name.length() >= 8 ? name.substring(0, 8) : "span-id!")));
        }
        return ExportTraceServiceRequest.newBuilder().addResourceSpans(ResourceSpans.newBuilder()
                .setResource(Resource.newBuilder().addAttributes(KeyValue.newBuilder().setKey("service.name")
                        .setValue(AnyValue.newBuilder().setStringValue(service))))
                .addScopeSpans(scope)).build();
    }

    private static SpoolRequest request(String target, String contentType, String encoding, byte[] body) {
        return new SpoolRequest("POST", target, contentType, encoding, "k", Optional.empty(), 0, body);
    }

    private static OtlpMerge.Part part(SpoolRequest request) {
        return OtlpMerge.partOf(request, LIMIT).orElseThrow(() -> new AssertionError("not mergeable: " + request));
    }

    @Test
    void protobufExportRequestsMergeIntoOneWithEveryResourceAndSpanInOrder() throws Exception {
        ExportTraceServiceRequest first = traces("checkout", "charge", "refund");
        ExportTraceServiceRequest second = traces("cart", "add-item");
        byte[] merged = OtlpMerge.merged(List.of(
                part(request("/v1/traces", "application/x-protobuf", "", first.toByteArray())),
                part(request("/v1/traces", "application/x-protobuf", "gzip", gzip(second.toByteArray())))));
        ExportTraceServiceRequest read = ExportTraceServiceRequest.parseFrom(merged);
        assertEquals(List.of(first.getResourceSpans(0), second.getResourceSpans(0)), read.getResourceSpansList());
    }

    @Test
    void jsonExportRequestsMergeByJoiningTheirArraysByteForByte() throws Exception {
        String one = "{ \"resourceSpans\" : [ {\"resource\":{},\"scopeSpans\":[{\"spans\":[{\"name\":\"a\","
                + "\"startTimeUnixNano\":\"1700000000000000001\",\"x\":1.00000000000000000001}]}]} ] }";
        String empty = "{\"resourceSpans\":[]}";
        String two = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"é\",\"value\":{}}]}},"
                + "{\"resource\":{}}]}\n";
        byte[] merged = OtlpMerge.merged(List.of(
                part(request("/v1/traces", "application/json", "", one.getBytes(StandardCharsets.UTF_8))),
                part(request("/v1/traces", "application/json; charset=utf-8", "", empty.getBytes(StandardCharsets.UTF_8))),
                part(request("/v1/traces", "application/json", "gzip", gzip(two.getBytes(StandardCharsets.UTF_8))))));
        String text = new String(merged, StandardCharsets.UTF_8);
        assertEquals("{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[{\"spans\":[{\"name\":\"a\","
                + "\"startTimeUnixNano\":\"1700000000000000001\",\"x\":1.00000000000000000001}]}]},"
                + "{\"resource\":{\"attributes\":[{\"key\":\"é\",\"value\":{}}]}},{\"resource\":{}}]}", text);
        assertEquals(3, JSON.readTree(merged).get("resourceSpans").size());
    }

    @Test
    void whatCannotBeReadOrIsNotOneExportRequestIsNotMerged() {
        byte[] proto = traces("s", "span").toByteArray();
        byte[] json = "{\"resourceLogs\":[{}]}".getBytes(StandardCharsets.UTF_8);
        List<SpoolRequest> unmergeable = List.of(
                request("/v1/traces?tenant=a", "application/x-protobuf", "", proto),
                request("/v1/ingest", "application/json", "", json),
                request("/v1/traces", "text/plain", "", proto),
                request("/v1/traces", "application/x-protobuf", "br", proto),
                request("/v1/traces", "application/x-protobuf", "gzip", proto), // not gzip at all
                request("/v1/logs", "application/json", "", "{\"resourceSpans\":[{}]}".getBytes(StandardCharsets.UTF_8)),
                request("/v1/logs", "application/json", "", "{\"resourceLogs\":[{}],\"extra\":1}"
                        .getBytes(StandardCharsets.UTF_8)),
                request("/v1/logs", "application/json", "", "{\"resourceLogs\":[{}],\"resourceLogs\":[{}]}"
                        .getBytes(StandardCharsets.UTF_8)),
                request("/v1/logs", "application/json", "", "{\"resourceLogs\":[{}]} []".getBytes(StandardCharsets.UTF_8)),
                request("/v1/logs", "application/json", "", "{\"resourceLogs\":[{}".getBytes(StandardCharsets.UTF_8)),
                request("/v1/logs", "application/json", "", "{}".getBytes(StandardCharsets.UTF_8)),
                new SpoolRequest("PUT", "/v1/logs", "application/json", "", "k", Optional.empty(), 0, json));
        for (SpoolRequest request : unmergeable) {
            assertTrue(OtlpMerge.partOf(request, LIMIT).isEmpty(), request.target() + " " + request.contentType()
                    + " " + request.contentEncoding() + " " + new String(request.body(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aGzipBodyThatInflatesPastTheMergeLimitIsNotMerged() {
        byte[] large = new byte[4096];
        SpoolRequest request = request("/v1/traces", "application/x-protobuf", "gzip", gzip(large));
        assertTrue(OtlpMerge.partOf(request, 4096).isPresent());
        assertTrue(OtlpMerge.partOf(request, 4095).isEmpty());
    }
}
