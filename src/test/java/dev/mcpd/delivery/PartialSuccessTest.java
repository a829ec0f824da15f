package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PartialSuccessTest {

    private static final String PROTOBUF = "application/x-protobuf";
    private static final String JSON = "application/json";

    /** A hand-written protobuf encoder: just what an Export*ServiceResponse needs. */
    private static final class Proto {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Proto varint(long value) {
            while ((value & ~0x7fL) != 0) {
                out.write((int) ((value & 0x7f) | 0x80));
                value >>>= 7;
            }
            out.write((int) value);
            return this;
        }

        Proto tag(int field, int wireType) {
            return varint(((long) field << 3) | wireType);
        }

        Proto varintField(int field, long value) {
            return tag(field, 0).varint(value);
        }

        Proto bytesField(int field, byte[] bytes) {
            tag(field, 2).varint(bytes.length);
            out.writeBytes(bytes);
            return this;
        }

        Proto stringField(int field, String text) {
            return bytesField(field, text.getBytes(StandardCharsets.UTF_8));
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    /** ExportTraceServiceResponse { partial_success (1) = ExportTracePartialSuccess { rejected_spans (1), error_message (2) } }. */
    private static byte[] exportResponse(long rejected, String message) {
        byte[] partial = new Proto().varintField(1, rejected).stringField(2, message).bytes();
        return new Proto().bytesField(1, partial).bytes();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aProtobufPartialSuccessGivesItsRejectedCountAndMessage() {
        assertEquals(Optional.of(new PartialSuccess(3, "bad span")), PartialSuccess.of(PROTOBUF, exportResponse(3, "bad span")));
    }

    @Test
    void theHandBuiltProtobufHasTheExpectedWireBytes() {
        // guards the test encoder itself: 0x0a = field 1 LEN, 0x08 = field 1 VARINT, 0x12 = field 2 LEN
        byte[] expected = {0x0a, 0x0c, 0x08, 0x03, 0x12, 0x08, 'b', 'a', 'd', ' ', 's', 'p', 'a', 'n'};
        assertArrayEquals(expected, exportResponse(3, "bad span"));
    }

    @Test
    void aRejectedCountAbove127EncodedOnSeveralVarintBytesIsRead() {
        byte[] answer = exportResponse(300, "too many");
        assertEquals((byte) 0xac, answer[3], "300 is encoded as 0xac 0x02");
        assertEquals((byte) 0x02, answer[4]);
        assertEquals(Optional.of(new PartialSuccess(300, "too many")), PartialSuccess.of(PROTOBUF, answer));
    }

    @Test
    void aVeryLargeRejectedCountIsRead() {
        assertEquals(Optional.of(new PartialSuccess(5_000_000_000L, "")),
                PartialSuccess.of(PROTOBUF, exportResponse(5_000_000_000L, "")));
    }

    @Test
    void theMessageMayComeBeforeTheCountInProtobuf() {
        byte[] partial = new Proto().stringField(2, "late").varintField(1, 7).bytes();
        assertEquals(Optional.of(new PartialSuccess(7, "late")),
                PartialSuccess.of(PROTOBUF, new Proto().bytesField(1, partial).bytes()));
    }

    @Test
    void unknownProtobufFieldsAroundThePartialSuccessAreSkipped() {
        byte[] partial = new Proto().varintField(1, 2).varintField(9, 42).stringField(2, "m").bytes();
        byte[] answer = new Proto().varintField(5, 1).stringField(6, "ignored").bytesField(1, partial).bytes();
        assertEquals(Optional.of(new PartialSuccess(2, "m")), PartialSuccess.of(PROTOBUF, answer));
    }

    @Test
    void anEmptyProtobufAnswerReportsNothingRejected() {
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, new byte[0]));
    }

    @Test
    void aProtobufPartialSuccessWithZeroRejectedReportsNothing() {
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, exportResponse(0, "just a warning")));
    }

    @Test
    void anEmptyProtobufPartialSuccessMessageReportsNothing() {
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, new byte[] {0x0a, 0x00}));
    }

    @Test
    void theProtobufContentTypeIsRecognisedWhateverItsCase() {
        assertEquals(Optional.of(new PartialSuccess(3, "x")),
                PartialSuccess.of("Application/X-Protobuf", exportResponse(3, "x")));
    }

    @Test
    void garbageProtobufBytesReportNothingWithoutThrowing() {
        byte[] endlessVarint = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
                (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff};
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, endlessVarint));
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, new byte[] {0x0a, 0x10, 0x08, 0x03}),
                "a length running past the end");
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, new byte[] {0x0a}), "a tag without its length");
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, new byte[] {0x0f, 0x01}), "wire type 7");
        assertEquals(Optional.empty(), PartialSuccess.of(PROTOBUF, utf8("<html>502 Bad Gateway</html>")));
    }

    @Test
    void anOtlpJsonPartialSuccessWithTheCountAsAStringIsRead() {
        assertEquals(Optional.of(new PartialSuccess(5, "x")),
                PartialSuccess.of(JSON, utf8("{\"partialSuccess\":{\"rejectedLogRecords\":\"5\",\"errorMessage\":\"x\"}}")));
    }

    @Test
    void anOtlpJsonPartialSuccessWithTheCountAsANumberIsRead() {
        assertEquals(Optional.of(new PartialSuccess(2, "bad spans")),
                PartialSuccess.of(JSON, utf8("{\"partialSuccess\":{\"rejectedSpans\":2,\"errorMessage\":\"bad spans\"}}")));
    }

    @Test
    void anOtlpJsonMetricsPartialSuccessIsRead() {
        assertEquals(Optional.of(new PartialSuccess(4, "")),
                PartialSuccess.of("application/json; charset=utf-8",
                        utf8("{\"partialSuccess\":{\"rejectedDataPoints\":\"4\"}}")));
    }

    @Test
    void anEmptyOtlpJsonPartialSuccessReportsNothing() {
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, utf8("{\"partialSuccess\":{}}")));
    }

    @Test
    void aNativeAnswerGivesItsRejectedCount() {
        assertEquals(Optional.of(new PartialSuccess(1, "")),
                PartialSuccess.of(JSON, utf8("{\"accepted\":2,\"duplicate\":0,\"rejected\":1}")));
    }

    @Test
    void aNativeAnswerWithNothingRejectedReportsNothing() {
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, utf8("{\"accepted\":2,\"duplicate\":1,\"rejected\":0}")));
    }

    @Test
    void garbageJsonReportsNothingWithoutThrowing() {
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, utf8("not json at all")));
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, utf8("{\"rejected\":")));
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, utf8("[1,2,3]")));
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, new byte[] {(byte) 0xff, 0x00, (byte) 0xfe}));
    }

    @Test
    void aMissingAnswerReportsNothing() {
        assertEquals(Optional.empty(), PartialSuccess.of(JSON, null));
        assertEquals(Optional.empty(), PartialSuccess.of(null, new byte[0]));
    }
}
