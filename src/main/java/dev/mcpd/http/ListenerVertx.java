package dev.mcpd.http;

import dev.mcpd.wire.Http2Windows;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.impl.VertxWrapper;
import io.vertx.core.net.SSLOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.net.TrafficShapingOptions;
import io.vertx.core.net.impl.SocketAddressImpl;
import io.vertx.core.streams.ReadStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Vert.x instance platform-http listens on, with what {@code camel.server.*} cannot set:
 * <ul>
 *   <li>idle connections bounded: a connection that carries no byte in either direction for {@link #idleTimeout} is
 *       closed — a sender that opened it and went quiet, before its first request or between two. Without it
 *       thousands of such connections stay open until the process runs out of file descriptors;</li>
 *   <li>every request passes the {@link FrontDoor} (HTTP framing, {@code Host}, the form of the target) before the
 *       router sees it;</li>
 *   <li>the port is served by {@link #LISTENING_LOOPS} event loops, not one: platform-http listens once, and Vert.x
 *       gives all of one server's connections to one event loop. More servers on the same port in the same Vert.x
 *       instance share its connections round-robin, each on an event loop of its own.</li>
 * </ul>
 *
 * <p>Why a wrapper: {@code VertxPlatformHttpServer} builds its {@link HttpServerOptions} and its router itself and
 * keeps both private; it does use a {@link Vertx} found in the registry, and {@link VertxWrapper} is Vert.x's own way
 * to change what one creates.
 */
final class ListenerVertx extends VertxWrapper {

    /** Streams a peer may have open at once on one HTTP/2 connection (what Vert.x defaults to, said here). */
    static final int MAX_STREAMS_PER_CONNECTION = 100;

    /** Event loops serving the port: one per core, so that every core can take connections. */
    static final int LISTENING_LOOPS = Math.max(1, Runtime.getRuntime().availableProcessors());

    private static final Logger LOG = LoggerFactory.getLogger(ListenerVertx.class);
    /** The liveness probe's path, which answers while the routes are not up yet too. */
    static final String LIVENESS = "/healthz";

    private final Duration idleTimeout;
    private final AtomicBoolean startingSaid = new AtomicBoolean();
    private final FrontDoor.RefusalLog refusals;
    private final Optional<ListenerTls> tls;
    private final BooleanSupplier routesUp;
    /** HTTP/2 answers not taken: a connection holding one longer than an idle one is kept is closed. */
    private final UnreadAnswers unreadAnswers;
    /** The port the listener bound: the configured one, or the one the kernel chose for port 0. */
    private volatile int boundPort;

    private ListenerVertx(VertxInternal delegate, Duration idleTimeout, FrontDoor.RefusalLog refusals,
                          Optional<ListenerTls> tls, BooleanSupplier routesUp) {
        super(delegate);
        this.idleTimeout = idleTimeout;
        this.refusals = refusals;
        this.tls = tls;
        this.routesUp = routesUp;
        this.unreadAnswers = UnreadAnswers.forHeap(idleTimeout, refusals);
    }

    UnreadAnswers unreadAnswers() {
        return unreadAnswers;
    }

    /**
     * Twice the request timeout (60 s by default, as OpenTelemetry's collector): longer than any request may take to
     * arrive, so a stalled request gets its 408 first.
     */
    static Duration idleTimeoutFor(Duration requestTimeout) {
        return requestTimeout.multipliedBy(2);
    }

    /**
     * {@code routesUp}: whether the routes are there to serve; until then every request is answered 503
     * {@code Retry-After: 5} here ("starting"). The server listens a moment before the routes are installed, and
     * Vert.x's router would answer those requests with an HTML 404.
     */
    static ListenerVertx create(VertxOptions options, Duration idleTimeout, FrontDoor.RefusalLog refusals,
                                Optional<ListenerTls> tls, BooleanSupplier routesUp) {
        return new ListenerVertx((VertxInternal) Vertx.vertx(options), idleTimeout, refusals, tls, routesUp);
    }

    Duration idleTimeout() {
        return idleTimeout;
    }

    /** The port the listener bound; 0 until it has. */
    int boundPort() {
        return boundPort;
    }

    @Override
    public HttpServer createHttpServer(HttpServerOptions options) {
        HttpServerOptions ours = new HttpServerOptions(options)
                .setIdleTimeout((int) Math.max(1, idleTimeout.toMillis())).setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                .setHttp2ConnectionWindowSize(Http2Windows.CONNECTION);
        ours.setInitialSettings(new Http2Settings(ours.getInitialSettings()).setInitialWindowSize(Http2Windows.STREAM)
                .setMaxConcurrentStreams(MAX_STREAMS_PER_CONNECTION));
        tls.ifPresent(listener -> listener.applyTo(ours));
        return new BehindFrontDoor(ours);
    }

    @Override
    public HttpServer createHttpServer() {
        return createHttpServer(new HttpServerOptions());
    }

    /**
     * {@code next}, once the routes are up; before, "starting; retry later" — the one place that answers it — except
     * {@code GET /healthz}, which answers {@code 200 ok} from the first connection the port accepts: the process is
     * alive and serving, and a liveness probe that hits this moment must not restart it. Said once in the log.
     */
    private Handler<HttpServerRequest> starting(Handler<HttpServerRequest> next) {
        return request -> {
            if (routesUp.getAsBoolean()) {
                next.handle(request);
                return;
            }
            if (request.method() == HttpMethod.GET && LIVENESS.equals(request.path())) {
                request.response().putHeader("Content-Type", Answers.TEXT).end("ok\n");
                return;
            }
            if (startingSaid.compareAndSet(false, true)) {
                LOG.info("requests that come before the routes are up are answered 503 \"starting; retry later\""
                        + " (Retry-After: {} s), GET {} 200 ok", IngestRefusal.RETRY_AFTER_SECONDS, LIVENESS);
            }
            request.response().setStatusCode(503)
                    .putHeader("Retry-After", Integer.toString(IngestRefusal.RETRY_AFTER_SECONDS))
                    .putHeader("Content-Type", Answers.TEXT).end("starting; retry later\n");
        };
    }

    /**
     * An HTTP server whose request handler is put behind the front door; everything else is the server's own. When it
     * listens, {@link #LISTENING_LOOPS} − 1 more servers with the same options and handlers listen on the same
     * address, each from an event loop of its own.
     */
    private final class BehindFrontDoor implements HttpServer {

        private final HttpServerOptions options;
        private final HttpServer server;
        private final List<HttpServer> more = new CopyOnWriteArrayList<>();
        private Handler<HttpServerRequest> requests;
        private Handler<HttpServerRequest> invalidRequests;
        private Handler<HttpConnection> connections;
        private Handler<Throwable> exceptions;

        BehindFrontDoor(HttpServerOptions options) {
            this.options = options;
            this.server = ListenerVertx.super.createHttpServer(options);
        }

        @Override
        public HttpServer requestHandler(Handler<HttpServerRequest> handler) {
            Handler<HttpServerRequest> door = handler == null ? null
                    : unreadAnswers.watching(FrontDoor.before(starting(handler), refusals));
            requests = tls.map(listener -> listener.admitting(door, refusals)).orElse(door);
            server.requestHandler(requests);
            return this;
        }

        @Override
        public Handler<HttpServerRequest> requestHandler() {
            return server.requestHandler();
        }

        @Override
        @SuppressWarnings("deprecation")
        public ReadStream<HttpServerRequest> requestStream() {
            return server.requestStream();
        }

        @Override
        public HttpServer invalidRequestHandler(Handler<HttpServerRequest> handler) {
            invalidRequests = handler;
            server.invalidRequestHandler(handler);
            return this;
        }

        @Override
        public HttpServer connectionHandler(Handler<HttpConnection> handler) {
            connections = handler;
            server.connectionHandler(handler);
            return this;
        }

        @Override
        public HttpServer exceptionHandler(Handler<Throwable> handler) {
            exceptions = handler;
            server.exceptionHandler(handler);
            return this;
        }

        @Override
        @SuppressWarnings("deprecation")
        public ReadStream<ServerWebSocket> webSocketStream() {
            return server.webSocketStream();
        }

        @Override
        public HttpServer webSocketHandler(Handler<ServerWebSocket> handler) {
            server.webSocketHandler(handler);
            return this;
        }

        @Override
        public HttpServer webSocketHandshakeHandler(Handler<ServerWebSocketHandshake> handler) {
            server.webSocketHandshakeHandler(handler);
            return this;
        }

        @Override
        public Handler<ServerWebSocket> webSocketHandler() {
            return server.webSocketHandler();
        }

        @Override
        public Future<Boolean> updateSSLOptions(SSLOptions options, boolean force) {
            more.forEach(extra -> extra.updateSSLOptions(options, force));
            return server.updateSSLOptions(options, force);
        }

        @Override
        public void updateTrafficShapingOptions(TrafficShapingOptions options) {
            more.forEach(extra -> extra.updateTrafficShapingOptions(options));
            server.updateTrafficShapingOptions(options);
        }

        @Override
        public Future<HttpServer> listen() {
            return listen(SocketAddress.inetSocketAddress(options.getPort(), options.getHost()));
        }

        @Override
        public Future<HttpServer> listen(SocketAddress requested) {
            // Port 0 is not shared between servers in Vert.x: each would bind a port of its own, and one on the
            // first's port fails. A negative port is Vert.x's "a random port, shared by the servers that ask for it"
            // (what HttpServerOptions.setPort(-1) gives; SocketAddress.inetSocketAddress refuses it).
            SocketAddress address = requested.port() == 0 ? new SocketAddressImpl(-1, requested.host()) : requested;
            return server.listen(address).compose(first -> {
                SocketAddress bound = address.port() < 0 ? address
                        : SocketAddress.inetSocketAddress(first.actualPort(), address.host());
                boundPort = first.actualPort();
                List<Future<HttpServer>> listening = new ArrayList<>();
                for (int i = 1; i < LISTENING_LOOPS; i++) {
                    listening.add(listenMore(bound));
                }
                return Future.all(listening).map(this);
            });
        }

        /** One more server on the address, listening from a new event loop context (Vert.x's next event loop). */
        private Future<HttpServer> listenMore(SocketAddress bound) {
            HttpServer extra = ListenerVertx.super.createHttpServer(options);
            extra.requestHandler(requests);
            if (invalidRequests != null) {
                extra.invalidRequestHandler(invalidRequests);
            }
            if (connections != null) {
                extra.connectionHandler(connections);
            }
            if (exceptions != null) {
                extra.exceptionHandler(exceptions);
            }
            more.add(extra);
            Promise<HttpServer> listened = Promise.promise();
            ListenerVertx.this.createEventLoopContext().runOnContext(unused ->
                    extra.listen(bound).onComplete(listened));
            return listened.future();
        }

        @Override
        public Future<Void> close() {
            List<Future<Void>> closing = new ArrayList<>();
            closing.add(server.close());
            more.forEach(extra -> closing.add(extra.close()));
            return Future.all(closing).mapEmpty();
        }

        @Override
        public void close(Handler<AsyncResult<Void>> completionHandler) {
            close().onComplete(completionHandler);
        }

        @Override
        public int actualPort() {
            return server.actualPort();
        }
    }
}
