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
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
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
        byte[] large = new byte[4096]; // one resource (field 1) of 4 093 bytes: a run of whole fields
        large[0] = 0x0a;
        large[1] = (byte) 0xfd;
        large[2] = 0x1f;
        SpoolRequest request = request("/v1/traces", "application/x-protobuf", "gzip", gzip(large));
        assertTrue(OtlpMerge.partOf(request, 4096).isPresent());
        assertTrue(OtlpMerge.partOf(request, 4095).isEmpty());
    }

    /** The tag of field 99, an unknown one, opening a group ({@code START_GROUP}) or closing it ({@code END_GROUP}). */
    static final byte[] OPEN_GROUP_99 = {(byte) 0x9b, 0x06};
    static final byte[] CLOSE_GROUP_99 = {(byte) 0x9c, 0x06};

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    @Test
    void anEntryThatEndsInsideAFieldIsNeverJoinedToAnother() throws Exception {
        byte[] opens = concat(traces("a", "opens").toByteArray(), OPEN_GROUP_99);
        byte[] victim = traces("b", "victim").toByteArray();
        byte[] closes = concat(CLOSE_GROUP_99, traces("c", "closes").toByteArray());
        // Why: joined, the open group would take the victim's resource in, and a receiver would never see its span.
        ExportTraceServiceRequest swallowed = ExportTraceServiceRequest.parseFrom(concat(opens, victim, closes));
        assertEquals(List.of("opens", "closes"), swallowed.getResourceSpansList().stream()
                .flatMap(r -> r.getScopeSpans(0).getSpansList().stream()).map(Span::getName).toList());

        assertTrue(OtlpMerge.partOf(request("/v1/traces", "application/x-protobuf", "", opens), LIMIT).isEmpty());
        assertTrue(OtlpMerge.partOf(request("/v1/traces", "application/x-protobuf", "gzip", gzip(closes)), LIMIT)
                .isEmpty());
        assertTrue(OtlpMerge.partOf(request("/v1/traces", "application/x-protobuf", "", victim), LIMIT).isPresent());
        byte[] wholeGroup = concat(victim, OPEN_GROUP_99, new byte[] {0x08, 0x01}, CLOSE_GROUP_99);
        assertTrue(OtlpMerge.partOf(request("/v1/traces", "application/x-protobuf", "", wholeGroup), LIMIT)
                .isPresent(), "an unknown field, a closed group among them, is a whole field");
    }

    @Test
    void aRunOfWholeFieldsIsToldFromEveryWayAMessageCanEndInsideOne() {
        assertTrue(ProtobufWire.wholeFields(new byte[0]));
        assertTrue(ProtobufWire.wholeFields(new byte[] {0x08, (byte) 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1d,
                1, 2, 3, 4, 0x22, 0x02, 'h', 'i'}), "varint, fixed64, fixed32, length-delimited");
        List<byte[]> broken = List.of(
                new byte[] {0x08, (byte) 0x96}, // a varint cut short
                new byte[] {0x11, 1, 2, 3}, // fixed64 cut short
                new byte[] {0x1d, 1, 2}, // fixed32 cut short
                new byte[] {0x22, 0x05, 'h', 'i'}, // a length past the end
                new byte[] {0x22, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
                    (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01}, // a length that is negative as a long
                new byte[] {0x0e}, new byte[] {0x0f}, // wire types 6 and 7
                new byte[] {0x00, 0x00}, // field number 0
                OPEN_GROUP_99, CLOSE_GROUP_99,
                concat(OPEN_GROUP_99, new byte[] {(byte) 0x0c}), // a group closed by another field's end tag
                concat(new byte[] {0x0b}, OPEN_GROUP_99, CLOSE_GROUP_99)); // an outer group left open
        for (byte[] message : broken) {
            assertTrue(!ProtobufWire.wholeFields(message), HexFormat.of().formatHex(message));
        }
        byte[] deep = new byte[202];
        for (int i = 0; i < 101; i++) {
            deep[i] = 0x0b;
            deep[201 - i] = 0x0c;
        }
        assertTrue(!ProtobufWire.wholeFields(deep), "groups nested past protobuf's own limit");
        assertTrue(ProtobufWire.wholeFields(Arrays.copyOfRange(deep, 1, 201)), "100 deep");
    }

    @Test
    void aJsonExportInUtf16IsNotSlicedButTravelsAlone() {
        byte[] utf16 = "{\"resourceSpans\":[{\"resource\":{}}]}".getBytes(StandardCharsets.UTF_16BE);
        assertTrue(OtlpMerge.jsonElements(utf16, "resourceSpans").isEmpty());
        assertTrue(OtlpMerge.partOf(request("/v1/traces", "application/json", "", utf16), LIMIT).isEmpty());
        byte[] withMark = "{\"resourceSpans\":[]}".getBytes(StandardCharsets.UTF_16);
        assertTrue(OtlpMerge.partOf(request("/v1/traces", "application/json", "", withMark), LIMIT).isEmpty());
    }
}
