package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.RawHttp2;
import dev.mcpd.testing.StepServer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link BodySizeCheck}: a declared length over {@code --max-body-bytes} is 413 on the head, before the body. */
class BodySizeCheckTest {

    private static final long LIMIT = 1024;
    private static StepServer server;

    @BeforeAll
    static void start() {
        server = StepServer.running(new BodySizeCheck(LIMIT));
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void aContentLengthExactlyAtTheLimitPasses() throws Exception {
        send("Content-Length: " + LIMIT + "\r\n", "x".repeat((int) LIMIT));
        assertTrue(server.next().passed());
    }

    @Test
    void aContentLengthOnePastTheLimitIs413BeforeTheBodyIsRead() throws Exception {
        // Only the head is sent: the check answers without waiting for a byte of the body.
        String answer = send("Content-Length: " + (LIMIT + 1) + "\r\n", "");
        IngestRefusal refusal = server.next().refused();
        assertEquals(413, refusal.status());
        assertEquals(IngestRefusal.Kind.TOO_LARGE, refusal.kind());
        assertEquals("request body larger than the limit of 1024 bytes", refusal.reason());
        assertTrue(refusal.bodyUnread(), "the connection is to close: the body is still on it");
        assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
    }

    @Test
    void aHugeDeclaredLengthIsRefusedTheSameWay() throws Exception {
        send("Content-Length: " + Long.MAX_VALUE + "\r\n", "");
        assertEquals(413, server.next().refused().status());
    }

    @Test
    void aRequestWithoutAContentLengthIsLeftToTheBodyReader() throws Exception {
        send("", "");
        assertTrue(server.next().passed());
    }

    @Test
    void aChunkedBodyHasNoDeclaredLengthAndPasses() throws Exception {
        send("Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n");
        assertTrue(server.next().passed());
    }

    @Test
    void aGrpcCallMayDeclareTheLimitPlusItsFiveBytePrefix() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            headOnly(h2, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", "application/grpc", LIMIT + 5);
            assertTrue(server.next().passed());
            headOnly(h2, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", "application/grpc", LIMIT + 6);
            IngestRefusal refusal = server.next().refused();
            assertEquals(413, refusal.status());
            // The reason names the message's limit, not the framed body's.
            assertEquals("request body larger than the limit of 1024 bytes", refusal.reason());
        }
    }

    @Test
    void overHttp2AnHttpRequestGetsNoPrefixAllowance() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            headOnly(h2, "/v1/traces", "application/x-protobuf", LIMIT + 1);
            assertEquals(413, server.next().refused().status());
        }
    }

    /** An HTTP/2 stream of only a head (its body never comes): the steps run on it and it is answered. */
    private static void headOnly(RawHttp2 h2, String path, String contentType, long contentLength) throws Exception {
        h2.answer(h2.headers(path, Map.of("content-type", contentType, "content-length",
                String.valueOf(contentLength)), false));
    }

    private static String send(String headers, String body) throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            return http.send("POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n" + body)
                    .readResponse();
        }
    }
}
