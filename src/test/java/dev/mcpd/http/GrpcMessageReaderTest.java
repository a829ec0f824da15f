package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.RawHttp2;
import dev.mcpd.testing.StepServer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.Test;

/** {@link GrpcMessageReader}: a unary call's one length-prefixed message becomes the body; anything else is refused. */
class GrpcMessageReaderTest {

    private static final String TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
    private static final int MAX = 100;

    private final BodyBudget budget = new BodyBudget(1_000);

    @Test
    void theMessageBehindItsPrefixBecomesTheBody() throws Exception {
        Exchange passed = passing(Map.of(), framed(0, "hello"));
        assertArrayEquals("hello".getBytes(StandardCharsets.US_ASCII), passed.getIn().getBody(byte[].class));
        assertFalse(GrpcCall.of(passed).compressed());
    }

    @Test
    void aMessageExactlyAtTheLimitIsTakenAndOnePastIs413OnItsPrefixAlone() throws Exception {
        assertEquals(MAX, passing(Map.of(), framed(0, "x".repeat(MAX))).getIn().getBody(byte[].class).length);
        // Only the prefix is sent: the length it declares is enough to refuse.
        IngestRefusal refusal = refusing(Map.of(), prefix(0, MAX + 1));
        assertEquals(413, refusal.status());
        assertEquals(IngestRefusal.Kind.TOO_LARGE, refusal.kind());
        assertEquals("request body larger than the limit of 100 bytes", refusal.reason());
    }

    @Test
    void anEmptyMessageIsAnEmptyBody() throws Exception {
        assertEquals(0, passing(Map.of(), prefix(0, 0)).getIn().getBody(byte[].class).length);
    }

    @Test
    void aShortPrefixIsInvalidArgument() throws Exception {
        IngestRefusal refusal = refusing(Map.of(), new byte[] {0, 0, 0, 1});
        assertEquals(400, refusal.status());
        assertEquals(IngestRefusal.Kind.BAD_BODY, refusal.kind());
        assertEquals("a gRPC call carries one length-prefixed message; this one has 4 bytes", refusal.reason());
        assertFalse(refusal.bodyUnread(), "the body was read whole");
    }

    @Test
    void aCompressedFlagOtherThanZeroOrOneIsRefused() throws Exception {
        assertEquals("a gRPC message's compressed flag is 0 or 1, not 2",
                refusing(Map.of(), framed(2, "abc")).reason());
    }

    @Test
    void aLengthThatDisagreesWithTheBodyIsRefusedEitherWay() throws Exception {
        byte[] second = concat(framed(0, "abc"), framed(0, "de"));
        assertEquals("a unary gRPC call carries exactly one message; more bytes follow it",
                refusing(Map.of(), second).reason());
        assertEquals("the gRPC message is shorter than its length prefix says",
                refusing(Map.of(), concat(prefix(0, 10), "abc".getBytes(StandardCharsets.US_ASCII))).reason());
    }

    @Test
    void aGzipMessageIsKeptCompressedAndTheCallSaysSo() throws Exception {
        Exchange passed = passing(Map.of("grpc-encoding", "gzip"), framed(1, "zipped"));
        assertTrue(GrpcCall.of(passed).compressed());
        assertArrayEquals("zipped".getBytes(StandardCharsets.US_ASCII), passed.getIn().getBody(byte[].class));
    }

    @Test
    void aCompressedMessageWithoutAGrpcEncodingIs400AndInAnotherEncoding501() throws Exception {
        IngestRefusal without = refusing(Map.of(), framed(1, "abc"));
        assertEquals(400, without.status());
        assertEquals("a compressed gRPC message needs a grpc-encoding", without.reason());
        IngestRefusal deflate = refusing(Map.of("grpc-encoding", "deflate"), framed(1, "abc"));
        assertEquals(501, deflate.status());
        assertEquals(IngestRefusal.Kind.NOT_IMPLEMENTED, deflate.kind());
        assertEquals("this grpc-encoding is not supported: send gzip or identity", deflate.reason());
    }

    @Test
    void anUncompressedMessageTakesAnyGrpcEncoding() throws Exception {
        assertFalse(GrpcCall.of(passing(Map.of("grpc-encoding", "deflate"), framed(0, "abc"))).compressed());
    }

    @Test
    void theMessageIsHeldAgainstTheBudgetUntilTheExchangeIsDone() throws Exception {
        Exchange passed = passing(Map.of(), framed(0, "x".repeat(40)));
        assertEquals(40, budget.held());
        passed.getExchangeExtension().handoverCompletions().forEach(done -> done.onComplete(passed));
        assertEquals(0, budget.held());
    }

    @Test
    void aMessageThatDoesNotFitTheBudgetIs503RetryAfterAndNothingIsHeld() throws Exception {
        BodyBudget small = new BodyBudget(10);
        try (StepServer server = readerServer(small)) {
            IngestRefusal refusal = post(server, Map.of(), framed(0, "x".repeat(11))).refused();
            assertEquals(503, refusal.status());
            assertEquals(IngestRefusal.Kind.UNAVAILABLE, refusal.kind());
            assertEquals("too many request bodies are being read at once; retry later", refusal.reason());
            assertEquals(Optional.of(IngestRefusal.RETRY_AFTER_SECONDS), refusal.retryAfterSeconds());
            assertEquals(0, small.held());
        }
    }

    @Test
    void anHttpRequestPassesUntouched() throws Exception {
        try (StepServer server = readerServer(budget); RawHttp http = new RawHttp(server.port(), 5_000)) {
            http.send("POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n\0\0\0\0\1").readResponse();
            Exchange passed = server.next().exchange();
            assertArrayEquals(new byte[] {0, 0, 0, 0, 1}, passed.getIn().getBody(byte[].class));
            assertEquals(0, budget.held());
        }
    }

    private StepServer readerServer(BodyBudget budget) {
        return StepServer.running(new IngestTargetCheck(new RolePaths(Set.of(), List.of(), List.of())),
                new GrpcMessageReader(MAX, budget)).readingBody();
    }

    private Exchange passing(Map<String, String> headers, byte[] body) throws Exception {
        try (StepServer server = readerServer(budget)) {
            StepServer.Outcome outcome = post(server, headers, body);
            assertTrue(outcome.passed(), String.valueOf(outcome));
            return outcome.exchange();
        }
    }

    private IngestRefusal refusing(Map<String, String> headers, byte[] body) throws Exception {
        long heldBefore = budget.held();
        try (StepServer server = readerServer(budget)) {
            IngestRefusal refusal = post(server, headers, body).refused();
            assertEquals(heldBefore, budget.held(), "a refused message holds nothing");
            return refusal;
        }
    }

    private static StepServer.Outcome post(StepServer server, Map<String, String> headers, byte[] body)
            throws Exception {
        Map<String, String> all = new HashMap<>(headers);
        all.put("content-type", "application/grpc");
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post(TRACE_EXPORT, all, body);
        }
        return server.next();
    }

    private static byte[] framed(int flag, String message) {
        byte[] bytes = message.getBytes(StandardCharsets.US_ASCII);
        return concat(prefix(flag, bytes.length), bytes);
    }

    private static byte[] prefix(int flag, long length) {
        return new byte[] {(byte) flag, (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8),
                (byte) length};
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }
}
