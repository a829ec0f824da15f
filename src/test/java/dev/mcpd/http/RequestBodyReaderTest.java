package dev.mcpd.http;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.StepServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestBodyReader} and the memory budget, on real requests: a body that has begun keeps its room, one that
 * does not fit is refused with 503 and lets go of its bytes at once, and a body declared but not begun holds nothing.
 */
class RequestBodyReaderTest {

    private final BodyBudget budget = new BodyBudget(100);
    private StepServer server;

    @BeforeEach
    void start() {
        server = StepServer.running(new RequestBodyReader(1_000, Duration.ofSeconds(10), budget));
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private static String post(String head, String body) {
        return "POST /v1/ingest HTTP/1.1\r\nHost: h\r\n" + head + "\r\n" + body;
    }

    private static String chunk(String data) {
        return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
    }

    private static void done(Exchange exchange) {
        exchange.getExchangeExtension().handoverCompletions().forEach(completion -> completion.onComplete(exchange));
    }

    @Test
    void aDeclaredBodyTakesItsWholeRoomAtItsFirstByteSoALaterBodyThatWouldNotFitIsRefusedAndTheFirstIsTaken()
            throws Exception {
        try (RawHttp first = new RawHttp(server.port(), 5_000); RawHttp later = new RawHttp(server.port(), 5_000)) {
            first.send(post("Content-Length: 60\r\n", "a".repeat(10)));
            await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 60);

            later.send(post("Content-Length: 60\r\n", "b".repeat(60)));
            IngestRefusal refusal = server.next().refused();
            assertEquals(503, refusal.status());
            assertEquals(Optional.of(IngestRefusal.RETRY_AFTER_SECONDS), refusal.retryAfterSeconds());
            assertEquals(60, budget.held(), "the refused body took nothing");

            first.send("a".repeat(50));
            StepServer.Outcome taken = server.next();
            assertTrue(taken.passed(), String.valueOf(taken));
            assertEquals("a".repeat(60), new String(taken.exchange().getIn().getBody(byte[].class),
                    StandardCharsets.US_ASCII));
            assertEquals(60, budget.held(), "held until the exchange is over");
            done(taken.exchange());
            assertEquals(0, budget.held());
        }
    }

    @Test
    void aDeclaredBodyNotBegunHoldsNothingAndTurnsNobodyAway() throws Exception {
        try (RawHttp silent = new RawHttp(server.port(), 5_000); RawHttp sender = new RawHttp(server.port(), 5_000)) {
            silent.send(post("Content-Length: 100\r\n", ""));
            sender.send(post("Content-Length: 100\r\n", "c".repeat(100)));
            StepServer.Outcome taken = server.next();
            assertTrue(taken.passed(), String.valueOf(taken));
            assertEquals(100, taken.exchange().getIn().getBody(byte[].class).length);
            done(taken.exchange());
            assertEquals(0, budget.held());
        }
    }

    @Test
    void aChunkedBodyRefusedForItsNextChunkLetsGoOfItsBytesBeforeItsAnswerIsOver() throws Exception {
        try (RawHttp holder = new RawHttp(server.port(), 5_000); RawHttp grower = new RawHttp(server.port(), 5_000)) {
            holder.send(post("Transfer-Encoding: chunked\r\n", chunk("h".repeat(30))));
            await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 30);
            grower.send(post("Transfer-Encoding: chunked\r\n", chunk("g".repeat(50))));
            await().atMost(Duration.ofSeconds(10)).until(() -> budget.held() == 80);

            grower.send(chunk("g".repeat(50)));
            IngestRefusal refusal = server.next().refused();
            assertEquals(503, refusal.status());
            assertEquals(30, budget.held(), "the refused body's 50 bytes are let go at once, its exchange still open");

            holder.send(chunk("h".repeat(20)) + "0\r\n\r\n");
            StepServer.Outcome taken = server.next();
            assertTrue(taken.passed(), String.valueOf(taken));
            assertEquals(50, taken.exchange().getIn().getBody(byte[].class).length);
        }
    }
}
