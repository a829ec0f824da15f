package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.TlsFiles;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamOffer;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One attempt over HTTP against a real Vert.x server: what the upstream is sent, and every way an answer comes back
 * as an {@link UpstreamAnswer} rather than a failed exchange — a whole answer, one too large, one that never ends, no
 * connection at all, an answer before the body was read — and what a health check reads.
 */
@Timeout(60)
class UpstreamHttpTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final Vertx serverVertx = Vertx.vertx();
    private volatile Consumer<HttpServerRequest> upstream = request -> request.response().end();
    private final ConcurrentHashMap<String, String> received = new ConcurrentHashMap<>();
    private HttpServer server;
    private CamelContext camel;
    private UpstreamBoard board;
    private UpstreamHttp http;

    @BeforeEach
    void start() throws Exception {
        server = serverVertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                .requestHandler(request -> upstream.accept(request)).listen().toCompletionStage()
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        board = boardFor(URI.create("http://127.0.0.1:" + server.actualPort()));
        http = new UpstreamHttp(board, 16, UpstreamTls.read(TlsFiles.none()), TIMEOUT);
        camel = new DefaultCamelContext();
        camel.start();
        http.start();
    }

    @AfterEach
    void stop() throws Exception {
        http.stop();
        camel.close();
        board.close();
        serverVertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static UpstreamBoard boardFor(URI url) {
        return new UpstreamBoard(List.of(url), UpstreamBoard.Settings.defaults(new Backoff(Duration.ofSeconds(1),
                Duration.ofSeconds(60), () -> 0.5)), InstantSource.system());
    }

    /** One attempt to the board's first upstream: the answer the exchange carries once the callback ran. */
    private UpstreamAnswer send(String target, MultiMap headers, byte[] body) throws Exception {
        Upstream to = board.upstreams().get(0);
        Exchange exchange = new DefaultExchange(camel);
        DeliveryExchange.setDestination(exchange, to, target, board.window(to).acquire().orElseThrow());
        DeliveryExchange.setRequest(exchange, new OutgoingRequest(HttpMethod.POST, headers, Buffer.buffer(body)));
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        boolean sync = http.process(exchange, done::complete);
        assertFalse(sync, "the answer comes back asynchronously");
        assertFalse(done.get(30, TimeUnit.SECONDS), "completed asynchronously");
        return DeliveryExchange.answer(exchange);
    }

    private UpstreamAnswer send(byte[] body) throws Exception {
        return send("/v1/logs", MultiMap.caseInsensitiveMultiMap(), body);
    }

    @Test
    void theRequestGoesAsMadeAndTheWholeAnswerComesBack() throws Exception {
        upstream = request -> request.body().onSuccess(body -> {
            received.put("target", request.uri());
            received.put("method", request.method().name());
            received.put("idempotency-key", String.valueOf(request.getHeader("Idempotency-Key")));
            received.put("body", body.toString(StandardCharsets.UTF_8));
            request.response().setStatusCode(429).putHeader("Content-Type", "application/json")
                    .putHeader("Retry-After", "7").end("{\"slow\":\"down\"}");
        });
        UpstreamAnswer answer = send("/v1/logs?tenant=a",
                MultiMap.caseInsensitiveMultiMap().add("Idempotency-Key", "k-1"),
                "{\"n\":1}".getBytes(StandardCharsets.UTF_8));
        assertNull(answer.failure());
        assertEquals(429, answer.status());
        assertEquals("application/json", answer.contentType());
        assertEquals("7", answer.retryAfter());
        assertArrayEquals("{\"slow\":\"down\"}".getBytes(StandardCharsets.UTF_8), answer.body());
        assertEquals("/v1/logs?tenant=a", received.get("target"));
        assertEquals("POST", received.get("method"));
        assertEquals("k-1", received.get("idempotency-key"));
        assertEquals("{\"n\":1}", received.get("body"));
    }

    @Test
    void anAnswerWithoutABodyCarriesNone() throws Exception {
        upstream = request -> request.body().onSuccess(body -> request.response().setStatusCode(202).end());
        UpstreamAnswer answer = send(new byte[10]);
        assertEquals(202, answer.status());
        assertEquals(0, answer.body().length);
    }

    @Test
    void anAnswerLargerThanAnyACollectorGivesFailsTheAttempt() throws Exception {
        upstream = request -> request.body().onSuccess(body -> request.response().setStatusCode(200)
                .end(Buffer.buffer(new byte[UpstreamHttp.MAX_ANSWER_BYTES + 1])));
        UpstreamAnswer answer = send(new byte[10]);
        assertEquals(0, answer.status());
        assertInstanceOf(UpstreamHttp.AnswerTooLarge.class, answer.failure());
    }

    @Test
    void anAnswerThatNeverEndsIsATimeoutAfterTheTimeout() throws Exception {
        upstream = request -> request.body().onSuccess(body -> {
            request.response().setStatusCode(200).setChunked(true).write("a byte now and then");
            serverVertx.setPeriodic(200, tick -> request.response().write("."));
        });
        long started = System.nanoTime();
        UpstreamAnswer answer = send(new byte[10]);
        assertEquals(0, answer.status());
        assertInstanceOf(TimeoutException.class, answer.failure(), String.valueOf(answer.failure()));
        assertTrue(System.nanoTime() - started >= TIMEOUT.toNanos(), "not before the whole answer was due");
    }

    @Test
    void anUpstreamThatAnswersBeforeReadingTheBodyIsHeard() throws Exception {
        upstream = request -> request.response().setStatusCode(413).end("too large");
        UpstreamAnswer answer = send(new byte[4 << 20]);
        assertEquals(413, answer.status(), String.valueOf(answer.failure()));
    }

    @Test
    void noConnectionIsAnAnswerToo() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        board.close();
        board = boardFor(URI.create("http://127.0.0.1:" + closed));
        UpstreamAnswer answer = send(new byte[10]);
        assertEquals(0, answer.status());
        assertTrue(answer.failure() != null, "a refused connection is carried, not thrown");
    }

    @Test
    void aHealthCheckReadsTheStatusAndTheCapabilitiesAnMcpdCollectorNames() throws Exception {
        upstream = request -> request.response().putHeader(UpstreamOffer.CAPABILITIES_HEADER, "h2c relay-batch/1")
                .end("ready");
        UpstreamHttp.CheckAnswer answer = http.check(camel, board.upstreams().get(0),
                URI.create("http://127.0.0.1:" + server.actualPort() + "/readyz"), "mcpd-test", TIMEOUT)
                .get(30, TimeUnit.SECONDS);
        assertEquals(200, answer.status());
        assertEquals(List.of("h2c", "relay-batch/1"), answer.capabilities());
        assertTrue(answer.http2(), "the server took the check's Upgrade: h2c");
    }
}
