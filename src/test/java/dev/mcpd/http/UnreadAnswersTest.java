package dev.mcpd.http;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp2;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTP/2 clients that never open their streams' windows: the answers they do not take are counted, and their
 * connection is closed when the count does not fit or an answer waits too long; clients that read are never counted.
 */
@Timeout(30)
class UnreadAnswersTest {

    private final List<String> logged = new CopyOnWriteArrayList<>();
    private Vertx vertx;
    private HttpServer server;

    @BeforeEach
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stopVertx() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** A server answering every request with a short body, its answers watched by {@code unread}. */
    private int serve(UnreadAnswers unread) throws Exception {
        server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1"))
                .requestHandler(unread.watching(request -> request.response().end("an answer with a body\n")));
        return server.listen(0).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
    }

    private UnreadAnswers unread(long streams, Duration patience) {
        return new UnreadAnswers(new BodyBudget(streams * UnreadAnswers.COST_PER_STREAM), patience,
                (kind, line) -> logged.add(kind + " " + line));
    }

    private static void openStreams(RawHttp2 client, int streams) throws Exception {
        for (int i = 0; i < streams; i++) {
            client.headers("/v1/traces", Map.of(), true);
        }
    }

    /** A client that opens {@code streams} and takes no answer is closed, saying {@code reason}; all given back. */
    private void assertClosed(UnreadAnswers unread, int streams, String reason) throws Exception {
        int port = serve(unread);
        try (RawHttp2 client = RawHttp2.neverOpeningItsWindows(port, 5_000)) {
            openStreams(client, streams);
            assertTrue(client.endedByServerWithin(10_000), "closed");
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> unread.held() == 0 && unread.connectionsWatched() == 0);
        assertTrue(logged.stream().anyMatch(line -> line.startsWith("UNREAD_ANSWERS closed an HTTP/2 connection"
                + " reason=\"" + reason)), logged.toString());
    }

    @Test
    void aStreamWithoutRoomIsRefusedAndAConnectionThatTakesNoAnswersIsClosed() throws Exception {
        // Room for two streams; a third while two answers wait (or a check while they wait): closed.
        assertClosed(unread(2, Duration.ofMinutes(5)), 3, "the memory for open streams is");
    }

    @Test
    void aConnectionHoldingUnsentAnswersWhileTheMemoryIsShortIsClosed() throws Exception {
        // All four fit; together they are more than three quarters: closed at its next check.
        assertClosed(unread(4, Duration.ofMinutes(5)), 4, "the memory for open streams is short");
    }

    @Test
    void aConnectionWhoseAnswerWaitsLongerThanItsPatienceIsClosed() throws Exception {
        UnreadAnswers unread = unread(100, Duration.ofSeconds(1));
        int port = serve(unread);
        try (RawHttp2 client = RawHttp2.neverOpeningItsWindows(port, 5_000)) {
            openStreams(client, 1);
            await().atMost(Duration.ofSeconds(5)).until(() -> unread.held() == UnreadAnswers.COST_PER_STREAM);
            assertFalse(client.endedByServerWithin(200), "within its patience, the connection stays");
            assertTrue(client.endedByServerWithin(10_000), "closed once the answer waited a second");
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> unread.held() == 0 && unread.connectionsWatched() == 0);
        assertTrue(logged.stream().anyMatch(line -> line.contains("reason=\"an answer was not taken within 1 s")),
                logged.toString());
    }

    @Test
    void aClientThatReadsItsAnswersGivesEachStreamsShareBackAndIsNeverClosed() throws Exception {
        UnreadAnswers unread = unread(4, Duration.ofSeconds(1));
        int port = serve(unread);
        try (RawHttp2 client = new RawHttp2(port, 5_000)) {
            for (int i = 0; i < 20; i++) {
                RawHttp2.Answer answer = client.post("/v1/traces", Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
                assertEquals(200, answer.status(), "answer " + i);
                assertEquals("an answer with a body\n", new String(answer.body(), StandardCharsets.UTF_8));
                await().atMost(Duration.ofSeconds(5)).until(() -> unread.held() == 0);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> unread.connectionsWatched() == 0);
            assertFalse(client.endedByServerWithin(1_500), "past the patience of a second, still open");
            assertEquals(200, client.post("/v1/traces", Map.of(), new byte[0]).status());
        }
        assertEquals(List.of(), logged);
    }
}
