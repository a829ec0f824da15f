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

/** {@link HeaderFieldCheck}: a kept header must be valid field content, on HTTP/2 (which carries any byte) too. */
class HeaderFieldCheckTest {

    private static StepServer server;

    @BeforeAll
    static void start() {
        server = StepServer.running(new HeaderFieldCheck());
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void everyKeptHeaderWithACarriageReturnLineFeedOrNulIsRefused400() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            for (String name : HeaderFieldCheck.KEPT) {
                for (String control : new String[] {"\r", "\n", "\0", "\u001b"}) {
                    h2.post("/v1/ingest", Map.of(name.toLowerCase(), "a" + control + "b"), new byte[0]);
                    IngestRefusal refusal = server.next().refused();
                    assertEquals(400, refusal.status(), name);
                    assertEquals(IngestRefusal.Kind.BAD_FRAMING, refusal.kind());
                    assertEquals("the " + name + " header holds a control character (CR, LF, NUL, …): not a valid"
                            + " header value", refusal.reason());
                    assertTrue(refusal.bodyUnread());
                }
            }
        }
    }

    @Test
    void aTabIsValidFieldContent() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post("/v1/ingest", Map.of("authorization", "Bearer\tkey", "idempotency-key", "a\tb"), new byte[0]);
            assertTrue(server.next().passed());
        }
    }

    @Test
    void aDeleteCharacterIsAControlCharacterToo() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post("/v1/ingest", Map.of("x-mcpd-key", "k\u007fey"), new byte[0]);
        }
        assertEquals("the x-mcpd-key header holds a control character (CR, LF, NUL, …): not a valid header value",
                server.next().refused().reason());
    }

    @Test
    void printableAndNonAsciiValuesPass() throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Type: application/json;"
                    + " charset=utf-8\r\nIdempotency-Key: caf\u00e9 ~!\r\n\r\n").readResponse();
        }
        assertTrue(server.next().passed());
    }

    @Test
    void aHeaderThatIsNotKeptIsNotItsConcern() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post("/v1/ingest", Map.of("x-trace-note", "a\r\nb"), new byte[0]);
            assertTrue(server.next().passed());
        }
    }
}
