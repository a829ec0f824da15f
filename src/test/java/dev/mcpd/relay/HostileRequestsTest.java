package dev.mcpd.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.RawHttp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 6, item 3: requests no SDK sends on purpose — lying lengths, line breaks in a header, odd and long paths, unknown
 * methods — each get an exact answer, and nothing of them is spooled beyond what HTTP framing says the body is.
 */
class HostileRequestsTest {

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay(Map.of("MCPD_REQUEST_TIMEOUT_SECONDS", "1"));

    private static String answerTo(String request) throws IOException {
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            return raw.send(request).readResponse();
        }
    }

    private static String post(String target, String headers, String body) {
        return "POST " + target + " HTTP/1.1\r\nHost: relay\r\n" + headers + "Content-Length: "
                + body.getBytes(StandardCharsets.ISO_8859_1).length + "\r\n\r\n" + body;
    }

    private static List<SpoolEntry> spooledWithBody(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.ISO_8859_1);
        return relay.spooled().stream().filter(e -> Arrays.equals(e.request().body(), bytes)).toList();
    }

    @Test
    void aContentLengthShorterThanTheBodySpoolsTheDeclaredBytesAndRefusesTheRestAsAMalformedRequest()
            throws Exception {
        String declared = "short-" + UUID.randomUUID();
        String request = "POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: " + declared.length()
                + "\r\n\r\n" + declared + "LEFTOVER BYTES THAT ARE NO REQUEST\r\n\r\n";
        int before = relay.spooled().size();
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            String answers = raw.send(request).readResponse();
            assertTrue(answers.startsWith("HTTP/1.1 202 "), answers);
            String rest = raw.readResponse();
            assertTrue(rest.startsWith("HTTP/1.0 400 ") || answers.contains("HTTP/1.0 400 "),
                    "the leftover is answered 400: " + answers + rest);
            assertTrue(raw.closedByServer(), "and the connection is closed");
        }
        assertEquals(1, spooledWithBody(declared).size(), "exactly the declared bytes are the request");
        assertEquals(before + 1, relay.spooled().size(), "the leftover never becomes an entry");
    }

    @Test
    void aContentLengthLongerThanTheBodyNeverSpoolsTheTruncatedBody() throws Exception {
        String sent = "truncated-" + UUID.randomUUID();
        int before = relay.spooled().size();
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            // The sender announces more than it sends and gives up (closes its side): no answer can be a 2xx.
            raw.send("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: " + (sent.length() + 50)
                    + "\r\n\r\n" + sent);
            raw.shutdownOutput();
            String answer = raw.readResponse();
            assertTrue(answer.isEmpty() || answer.startsWith("HTTP/1.1 408 ") || answer.startsWith("HTTP/1.1 400 "),
                    answer);
        }
        assertEquals(before, relay.spooled().size());
        assertTrue(spooledWithBody(sent).isEmpty());
    }

    @Test
    void aMalformedOrDoubleContentLengthIsRefused400() throws Exception {
        int before = relay.spooled().size();
        for (String lengths : List.of("Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: -1\r\n",
                "Content-Length: abc\r\n")) {
            String answer = answerTo("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\n" + lengths + "\r\nhello!");
            assertTrue(answer.startsWith("HTTP/1.1 400 "), lengths + " → " + answer);
        }
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void aLineBreakInsideTheIdempotencyKeyIsRefused400AndNothingIsSpooled() throws Exception {
        int before = relay.spooled().size();
        // A bare CR, a bare LF and an obsolete line folding: none can become a second header, here or upstream.
        for (String key : List.of("abc\rInjected: 1", "abc\nInjected: 1", "abc\r\n Injected: 1")) {
            String answer = answerTo(post("/v1/ingest", "Idempotency-Key: " + key + "\r\n", "hello"));
            assertTrue(answer.startsWith("HTTP/1.1 400 "), key.replace("\r", "\\r").replace("\n", "\\n") + " → "
                    + answer);
        }
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void oddPathsAreIngestedNormalisedAndNoSpoolFileNameDerivesFromThem() throws Exception {
        // Issue 12: dot segments go (a target cannot climb out of an upstream's path); the query is kept as sent.
        Map<String, String> normalised = Map.of(
                "/../../etc/passwd", "/etc/passwd",
                "/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd",
                "/v1/traces/../../x", "/x",
                "/v1/%00x?name=../../y", "/v1/%00x?name=../../y",
                "/" + "a".repeat(3000), "/" + "a".repeat(3000));
        for (Map.Entry<String, String> target : normalised.entrySet()) {
            String body = "odd-" + UUID.randomUUID();
            String answer = answerTo(post(target.getKey(), "", body));
            assertTrue(answer.startsWith("HTTP/1.1 202 "), target.getKey() + " → " + answer);
            assertEquals(target.getValue(), spooledWithBody(body).get(0).request().target());
        }
        try (Stream<Path> files = Files.walk(relay.spoolDir().getParent())) {
            List<String> names = files.filter(Files::isRegularFile).map(f -> f.getFileName().toString()).toList();
            assertTrue(names.stream().allMatch(n -> n.matches("\\d{20}\\.(seg|cred|ack)") || n.equals("id")
                            || n.equals("spool.lock")),
                    "only sequence-numbered files (and the spool's id and lock): " + names);
        }
    }

    @Test
    void aTargetLongerThanTheRequestLineLimitIsRefused414() throws Exception {
        int before = relay.spooled().size();
        String answer = answerTo(post("/" + "a".repeat(9000), "", "hello"));
        assertTrue(answer.startsWith("HTTP/1.0 414 "), answer);
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void unknownAndOtherMethodsOnAnIngestPathAreRefused405WithAllowPost() throws Exception {
        int before = relay.spooled().size();
        for (String method : List.of("BREW", "PUT", "PATCH", "DELETE", "OPTIONS")) {
            String answer = answerTo(method + " /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: 5\r\n\r\nhello");
            assertTrue(answer.startsWith("HTTP/1.1 405 "), method + " → " + answer);
            assertTrue(answer.contains("Allow: POST"), answer);
            assertTrue(answer.contains("this method is not allowed here: use POST") && !answer.contains(method + " is"),
                    answer);
        }
        String answer = answerTo("G@T /v1/ingest HTTP/1.1\r\nHost: relay\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.0 400 "), "not a method token → 400: " + answer);
        assertEquals(before, relay.spooled().size());
    }

    @Test
    void bothContentLengthAndChunkedFrameTheBodyByChunksAsHttpSays() throws Exception {
        // RFC 9112 section 6.3: Transfer-Encoding overrides Content-Length. The relay re-frames the body upstream itself,
        // so the declared length can never smuggle a second request past it.
        String body = "chunk-" + UUID.randomUUID();
        String answer = answerTo("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: 4\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(body.length()) + "\r\n" + body
                + "\r\n0\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 202 "), answer);
        assertArrayEquals(body.getBytes(StandardCharsets.ISO_8859_1), spooledWithBody(body).get(0).request().body());
    }
}
