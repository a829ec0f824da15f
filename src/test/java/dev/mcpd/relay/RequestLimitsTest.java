package dev.mcpd.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** --max-body-bytes (413) and --request-timeout-seconds (408) apply before anything is written. */
class RequestLimitsTest {

    static final int LIMIT = 1024;

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay(Map.of("MCPD_MAX_BODY_BYTES", Integer.toString(LIMIT),
            "MCPD_REQUEST_TIMEOUT_SECONDS", "1"));



    private static String head(String path, String extraHeaders) {
        return "POST " + path + " HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n" + extraHeaders
                + "\r\n";
    }

    @Test
    void aDeclaredLengthOverTheLimitIsRefused413BeforeTheBodyIsRead() throws Exception {
        int before = relay.spooled().size();
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            // Only the head is sent: the answer must come without waiting for a body.
            String answer = raw.send(head("/v1/ingest", "Content-Length: " + (LIMIT + 1) + "\r\n")).readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 413 "), answer);
            assertTrue(answer.toLowerCase().contains("connection: close"), answer);
            assertTrue(answer.contains("larger than the limit of " + LIMIT + " bytes"), answer);
            assertTrue(raw.closedByServer(), "the unread body never becomes a next request");
        }
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void aChunkedBodyGrowingPastTheLimitIsRefused413() throws Exception {
        int before = relay.spooled().size();
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            raw.send(head("/v1/ingest", "Transfer-Encoding: chunked\r\n"));
            String chunk = "x".repeat(600);
            raw.send(Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
            raw.send(Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n"); // 1200 > 1024, no end chunk
            String answer = raw.readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 413 "), answer);
        }
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void aChunkedBodyWithinTheLimitIsAccepted() throws Exception {
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            raw.send(head("/v1/ingest", "Transfer-Encoding: chunked\r\n"));
            String chunk = "{\"events\":[{\"chunked\":true}]}";
            String answer = raw.send(Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n0\r\n\r\n")
                    .readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 202 "), answer);
        }
        assertTrue(relay.spooled().stream()
                .anyMatch(e -> new String(e.request().body()).equals("{\"events\":[{\"chunked\":true}]}")));
    }

    @Test
    void aBodyExactlyAtTheLimitIsAccepted() throws Exception {
        String body = "y".repeat(LIMIT);
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            String answer = raw.send(head("/v1/ingest", "Content-Length: " + LIMIT + "\r\n") + body).readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 202 "), answer);
        }
    }

    @Test
    void aBodyNotFullyReceivedInTimeIsRefused408() throws Exception {
        int before = relay.spooled().size();
        long started = System.nanoTime();
        try (RawHttp raw = new RawHttp(relay.port(), 10_000)) {
            // 100 bytes announced, 10 sent: the sender stalls.
            String answer = raw.send(head("/v1/ingest", "Content-Length: 100\r\n") + "{\"events\":").readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 408 "), answer);
            assertTrue(answer.contains("not received within 1 s"), answer);
        }
        long waitedMillis = (System.nanoTime() - started) / 1_000_000;
        assertTrue(waitedMillis >= 900, "answered after the timeout, not before: " + waitedMillis + " ms");
        assertEquals(before, relay.spooled().size());
    }
}
