package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.StepServer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link FrontDoor}: HTTP's framing rules, refused before any handler behind it sees the request. */
class FrontDoorTest {

    private static final BlockingQueue<String> SERVED = new LinkedBlockingQueue<>();
    private static final BlockingQueue<String> LOGGED = new LinkedBlockingQueue<>();
    private static StepServer server;

    @BeforeAll
    static void start() {
        server = StepServer.handledBy(FrontDoor.before(request -> request.body().onSuccess(body -> {
            SERVED.add(request.uri());
            request.response().end("served " + body.length() + "\n");
        }), (kind, line) -> LOGGED.add(kind + " " + line)));
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @BeforeEach
    void forget() {
        SERVED.clear();
        LOGGED.clear();
    }

    @Test
    void aWellFramedRequestIsHandedOnAndItsConnectionKept() throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            String answer = http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}")
                    .readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            assertTrue(answer.endsWith("served 2\n"), answer);
            assertFalse(lower(answer).contains("connection: close"), answer);
            // The same connection serves the next request.
            assertTrue(http.send("POST /v1/again HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n").readResponse()
                    .startsWith("HTTP/1.1 200"));
        }
        assertEquals("/v1/ingest", SERVED.poll());
        assertEquals("/v1/again", SERVED.poll());
        assertTrue(LOGGED.isEmpty());
    }

    @Test
    void transferCodingsOtherThanOneFinalChunkedAreRefusedAndTheConnectionClosed() throws Exception {
        String notLast = "Transfer-Encoding must end with chunked: the body's length cannot be told otherwise";
        String twice = "Transfer-Encoding names chunked more than once";
        String other = "a transfer coding other than chunked is not implemented: send the body chunked, or with a"
                + " Content-Length (Content-Encoding for compression)";
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("Transfer-Encoding: xchunked\r\n", "400 " + notLast);
        expected.put("Transfer-Encoding: chunked, gzip\r\n", "400 " + notLast);
        expected.put("Transfer-Encoding: chunked, chunked\r\n", "400 " + twice);
        expected.put("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "400 " + twice);
        expected.put("Transfer-Encoding: gzip, chunked\r\n", "501 " + other);
        expected.put("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", "501 " + other);
        for (var coding : expected.entrySet()) {
            String status = coding.getValue().substring(0, 3);
            String reason = coding.getValue().substring(4);
            refused("POST /v1/ingest HTTP/1.1\r\nHost: h\r\n" + coding.getKey() + "\r\n5\r\nhello\r\n0\r\n\r\n",
                    status, reason, "BAD_FRAMING");
        }
    }

    @Test
    void aChunkedRequestIsServedAndItsConnectionClosedAfterTheAnswer() throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            String answer = http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n0\r\n\r\n").readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            assertTrue(answer.endsWith("served 5\n"), answer);
            assertTrue(lower(answer).contains("connection: close"), answer);
            assertTrue(http.closedByServer());
        }
    }

    @Test
    void twoHostHeadersAre400() throws Exception {
        refused("POST /v1/ingest HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 0\r\n\r\n", "400",
                "a request carries one Host header, not several", "BAD_FRAMING");
    }

    @Test
    void anHttp11RequestWithoutAHostIs400ButHttp10NeedsNone() throws Exception {
        refused("POST /v1/ingest HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "400",
                "a Host header naming host[:port] is required", "BAD_FRAMING");
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            assertTrue(http.send("GET /healthz HTTP/1.0\r\n\r\n").readResponse().startsWith("HTTP/1.0 200"));
        }
        assertEquals("/healthz", SERVED.poll());
    }

    @Test
    void aTargetThatIsNeitherAnAbsolutePathNorAnHttpUrlIs400() throws Exception {
        for (String target : new String[] {"*", "v1/traces", "@host/x", "ftp://host/x"}) {
            refused("POST " + target + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", "400",
                    "the request target must be an absolute path (/…) or an http(s) URL", "BAD_TARGET");
        }
    }

    @Test
    void anAbsoluteFormTargetIsHandedOnAsItCame() throws Exception {
        for (String target : new String[] {"http://other.example/v1/logs", "HTTPS://other.example:8443/v1/logs?x=1"}) {
            try (RawHttp http = new RawHttp(server.port(), 5_000)) {
                String answer = http.send("POST " + target + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
                        .readResponse();
                assertTrue(answer.startsWith("HTTP/1.1 200"), target + ": " + answer);
            }
            assertEquals(target, SERVED.poll());
        }
    }

    @Test
    void aRequestPipelinedBehindARefusedOneIsNeverServed() throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            String answer = http.send("POST /v1/first HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 0\r\n\r\n"
                    + "POST /v1/second HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n").readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
            assertTrue(http.closedByServer());
        }
        assertTrue(SERVED.isEmpty(), "served: " + SERVED);
    }

    @Test
    void aRefusalIsLoggedByItsKindWithTheSendersMethodPathAndAddress() throws Exception {
        String logged = refused("PUT /v1/x?y=1 HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 0\r\n\r\n",
                "400", "a request carries one Host header, not several", "BAD_FRAMING");
        assertEquals("BAD_FRAMING refused status=400 reason=\"a request carries one Host header, not several\""
                + " method=PUT path=\"/v1/x?y=1\" remote=127.0.0.1", logged);
    }

    @Test
    void withoutAHandlerThereIsNoFrontDoor() {
        assertNull(FrontDoor.before(null, (kind, line) -> { }));
    }

    /** Sends {@code request}, checks it was refused so, and gives the line logged of it. */
    private static String refused(String request, String status, String reason, String kind) throws Exception {
        LOGGED.clear();
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            String answer = new String(http.send(request).readResponse().getBytes(StandardCharsets.ISO_8859_1),
                    StandardCharsets.UTF_8);
            assertTrue(answer.startsWith("HTTP/1.1 " + status + " "), request + " -> " + answer);
            assertTrue(answer.endsWith("\r\n\r\n" + reason + "\n"), request + " -> " + answer);
            assertTrue(lower(answer).contains("connection: close"), answer);
            assertTrue(http.closedByServer(), request);
        }
        assertTrue(SERVED.isEmpty(), request + " reached the handler behind the front door");
        String logged = LOGGED.poll();
        assertTrue(logged != null && logged.startsWith(kind + " refused status=" + status + " reason=\"" + reason),
                String.valueOf(logged));
        return logged;
    }

    private static String lower(String text) {
        return text.toLowerCase(Locale.ROOT);
    }
}
