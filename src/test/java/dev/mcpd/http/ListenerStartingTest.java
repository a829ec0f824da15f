package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.mcpd.testing.CapturedLog;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The moment between the port opening and the routes being up: every request is told "starting; retry later" with
 * {@code Retry-After}, in one place, said once in the log — but {@code GET /healthz}, which is alive from the first
 * accepted connection.
 */
class ListenerStartingTest {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static HttpResponse<String> send(int port, String method, String path) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.ofString(method.equals("POST") ? "{}" : ""))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void beforeTheRoutesAreUpHealthzIsAliveAndEverythingElseIsToldToRetry() throws Exception {
        AtomicBoolean routesUp = new AtomicBoolean();
        ListenerVertx vertx = ListenerVertx.create(new VertxOptions(), Duration.ofSeconds(60), (kind, line) -> { },
                Optional.empty(), routesUp::get);
        try (CapturedLog log = new CapturedLog()) {
            HttpServer server = vertx.createHttpServer().requestHandler(request -> request.response()
                    .end("routed\n"));
            server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            int port = vertx.boundPort();

            HttpResponse<String> alive = send(port, "GET", "/healthz");
            assertEquals(200, alive.statusCode());
            assertEquals("ok\n", alive.body());
            for (String[] request : new String[][] {{"GET", "/readyz"}, {"POST", "/v1/traces"}, {"GET", "/metrics"}}) {
                HttpResponse<String> told = send(port, request[0], request[1]);
                assertEquals(503, told.statusCode(), request[1]);
                assertEquals("starting; retry later\n", told.body());
                assertEquals(Optional.of("5"), told.headers().firstValue("Retry-After"));
            }
            assertEquals(1, log.events("dev.mcpd.http.ListenerVertx", Level.INFO).size(), "said once");

            routesUp.set(true);
            assertEquals("routed\n", send(port, "GET", "/healthz").body(), "the routes answer once they are up");
            assertEquals("routed\n", send(port, "POST", "/v1/traces").body());
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void onPortZeroEveryListeningLoopServesTheOnePortTheKernelChose() throws Exception {
        ListenerVertx vertx = ListenerVertx.create(new VertxOptions(), Duration.ofSeconds(60), (kind, line) -> { },
                Optional.empty(), () -> true);
        try {
            Set<String> loops = ConcurrentHashMap.newKeySet();
            HttpServer server = vertx.createHttpServer().requestHandler(request -> {
                loops.add(Thread.currentThread().getName());
                request.response().end("routed\n");
            });
            server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            int port = vertx.boundPort();
            assertTrue(port > 0, "the port bound, not the 0 asked for: " + port);
            assertEquals(port, server.actualPort());
            for (int i = 0; i < 4 * ListenerVertx.LISTENING_LOOPS; i++) {
                try (Socket socket = new Socket("127.0.0.1", port)) { // a connection each: they go round the loops
                    socket.getOutputStream().write("GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                    String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                    assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
                }
            }
            assertEquals(ListenerVertx.LISTENING_LOOPS, loops.size(), "each loop took connections: " + loops);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
