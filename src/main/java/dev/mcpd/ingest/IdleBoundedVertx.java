package dev.mcpd.ingest;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.impl.VertxWrapper;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The Vert.x instance platform-http listens on, with idle connections bounded: a connection that carries no byte in
 * either direction for {@link #idleTimeout} is closed — a sender that opened it and went quiet, before its first request
 * or between two. Without it thousands of such connections stay open until the process runs out of file descriptors.
 *
 * <p>Why a wrapper: {@code camel.server.*} has no idle or connection timeout, and {@code VertxPlatformHttpServer}
 * builds its {@link HttpServerOptions} itself; it does use a {@link Vertx} found in the registry, and
 * {@link VertxWrapper} is Vert.x's own way to change what one creates.
 */
final class IdleBoundedVertx extends VertxWrapper {

    private final Duration idleTimeout;

    private IdleBoundedVertx(VertxInternal delegate, Duration idleTimeout) {
        super(delegate);
        this.idleTimeout = idleTimeout;
    }

    /**
     * Twice the request timeout (60 s by default, as OpenTelemetry's collector): longer than any request may take to
     * arrive, so a stalled request gets its 408 first.
     */
    static Duration idleTimeoutFor(Duration requestTimeout) {
        return requestTimeout.multipliedBy(2);
    }

    static IdleBoundedVertx create(VertxOptions options, Duration idleTimeout) {
        return new IdleBoundedVertx((VertxInternal) Vertx.vertx(options), idleTimeout);
    }

    Duration idleTimeout() {
        return idleTimeout;
    }

    @Override
    public HttpServer createHttpServer(HttpServerOptions options) {
        return super.createHttpServer(new HttpServerOptions(options)
                .setIdleTimeout((int) Math.max(1, idleTimeout.toMillis())).setIdleTimeoutUnit(TimeUnit.MILLISECONDS));
    }

    @Override
    public HttpServer createHttpServer() {
        return createHttpServer(new HttpServerOptions());
    }
}
