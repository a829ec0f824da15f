package dev.mcpd.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.StepServer;
import dev.mcpd.wire.WaitDuration;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link WaitRequest}: {@code mcpd-relay-wait} read before anything is written; a bad one is 400. */
class WaitRequestTest {

    private static StepServer server;

    @BeforeAll
    static void start() {
        server = StepServer.running(new WaitRequest());
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void withoutTheHeaderTheSenderDoesNotWait() throws Exception {
        assertEquals(Optional.empty(), waitOf(""));
    }

    @Test
    void aDurationIsKeptForTheAnswer() throws Exception {
        assertEquals(Optional.of(Duration.ofMillis(500)), waitOf("mcpd-relay-wait: 500ms\r\n"));
        assertEquals(Optional.of(Duration.ofSeconds(10)), waitOf("mcpd-relay-wait: 10s\r\n"));
        assertEquals(Optional.of(Duration.ofMinutes(1)), waitOf("mcpd-relay-wait: 1m\r\n"));
    }

    @Test
    void exactlyTheLongestWaitIsTakenAndOneMillisecondMoreIs400() throws Exception {
        long max = WaitDuration.MAX.toMillis();
        assertEquals(Optional.of(WaitDuration.MAX), waitOf("mcpd-relay-wait: " + max + "ms\r\n"));
        IngestRefusal refusal = refused("mcpd-relay-wait: " + (max + 1) + "ms\r\n");
        assertEquals(400, refusal.status());
        assertEquals(IngestRefusal.Kind.BAD_WAIT, refusal.kind());
        // The reason names the real bound.
        assertEquals("mcpd-relay-wait is at most " + WaitDuration.MAX.toSeconds() + "s", refusal.reason());
        assertTrue(refusal.bodyUnread());
    }

    @Test
    void aValueThatIsNoDurationIs400AndNothingIsKept() throws Exception {
        for (String value : new String[] {"soon", "10", "-5s", "1h30"}) {
            IngestRefusal refusal = refused("mcpd-relay-wait: " + value + "\r\n");
            assertEquals(400, refusal.status(), value);
            assertEquals("mcpd-relay-wait must be a duration like 500ms, 10s or 1m", refusal.reason(), value);
        }
    }

    private static Optional<Duration> waitOf(String headers) throws Exception {
        send(headers);
        StepServer.Outcome outcome = server.next();
        assertTrue(outcome.passed(), headers);
        return IngestExchange.wait(outcome.exchange());
    }

    private static IngestRefusal refused(String headers) throws Exception {
        send(headers);
        StepServer.Outcome outcome = server.next();
        assertEquals(Optional.empty(), IngestExchange.wait(outcome.exchange()));
        return outcome.refused();
    }

    private static void send(String headers) throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n" + headers + "\r\n").readResponse();
        }
    }
}
