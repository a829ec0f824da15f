package dev.mcpd.http;

import dev.mcpd.routing.Resume;
import io.vertx.core.http.HttpServerRequest;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.camel.Processor;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.component.platform.http.spi.PlatformHttpConsumer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpEngine;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;

/**
 * platform-http's Vert.x engine, except that the routes a role names run on the event loop that took the request
 * ({@link EventLoopConsumer}) instead of being handed to a worker thread each: the role's own routes, whose every
 * step either answers at once or waits without blocking ({@link Resume}). Any other platform-http route — an
 * operator's, under {@code --routes} — is served as platform-http serves it, on a worker thread, so it may block.
 */
public final class EventLoopEngine extends VertxPlatformHttpEngine {

    private final Set<String> onEventLoop;
    private final Consumer<HttpServerRequest> answered;

    /**
     * {@code onEventLoop}: the paths (as the routes' {@code from} name them) whose routes never block; read as each
     * route starts, so the role may still add to it until then.
     */
    public EventLoopEngine(Set<String> onEventLoop) {
        this(onEventLoop, request -> { });
    }

    /** As {@link #EventLoopEngine(Set)}; {@code answered} is told of each answer once it is written. */
    EventLoopEngine(Set<String> onEventLoop, Consumer<HttpServerRequest> answered) {
        this.onEventLoop = onEventLoop;
        this.answered = answered;
    }

    @Override
    public PlatformHttpConsumer createConsumer(PlatformHttpEndpoint endpoint, Processor processor) {
        return new EventLoopConsumer(endpoint, processor, getHandlers(),
                VertxPlatformHttpRouter.getRouterNameFromPort(getServerPort()), onEventLoop.contains(endpoint.getPath()),
                answered);
    }
}
