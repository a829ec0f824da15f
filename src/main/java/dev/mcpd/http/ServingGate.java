package dev.mcpd.http;

import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.camel.CamelContext;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.support.EventNotifierSupport;

/**
 * What the HTTP port answers around the Camel routes. Two Vert.x routes of our own sit beside platform-http's:
 * <ul>
 *   <li>a first one: once the context is stopping (SIGTERM), an ingest request gets 503 with {@code Retry-After: 5}
 *       — never platform-http's bare 503 of a suspended route, nor a 405 once the route is gone — so every sender
 *       retries against another relay or later; {@code /readyz} answers 503 {@code unavailable: stopping} so a load
 *       balancer moves traffic away; the other probes still answer;</li>
 *   <li>a last one, for what no Camel route took: {@code GET /} lists the port's pages; a GET of a page of the
 *       role's that does not exist ({@code /relay/foo}) is a 404; anything else a 405 with {@code Allow} (Vert.x's
 *       own names no method when routes are mounted the way platform-http mounts them) — or, for a POST on an ingest
 *       path or any request while the routes are not up yet, 503 with {@code Retry-After: 5}: the server listens a
 *       moment before the routes start.</li>
 * </ul>
 * Installed as the routes start (the HTTP server is up by then), so there is no window without it.
 */
public final class ServingGate extends EventNotifierSupport {


    private final int port;
    private final RolePaths paths;
    private final AtomicBoolean routesUp = new AtomicBoolean();
    private final AtomicBoolean stopping;
    private volatile boolean installed;

    private ServingGate(int port, RolePaths paths, AtomicBoolean stopping) {
        this.port = port;
        this.paths = paths;
        this.stopping = stopping;
        // Only context events matter here. A notifier that takes exchange events makes Camel build and dispatch
        // several per request (measured: a few percent of the relay's CPU at saturation).
        setIgnoreExchangeEvents(true);
        setIgnoreRouteEvents(true);
        setIgnoreServiceEvents(true);
        setIgnoreStepEvents(true);
    }

    /**
     * Registers the gate with the context; it installs itself when the routes start. {@code paths} are the role's
     * {@code GET} paths; {@code stopping} is a stop flag shared with whoever learns of a stop first: a SIGTERM that
     * arrives while the context is still starting sets it at once, so the port answers "stopping" from that moment.
     */
    public static ServingGate on(CamelContext context, int port, RolePaths paths, AtomicBoolean stopping) {
        ServingGate gate = new ServingGate(port, paths, stopping);
        context.getManagementStrategy().addEventNotifier(gate);
        return gate;
    }

    /**
     * True once the gate is on the router and the Camel context has started: every route is there. Until then the
     * listener answers every request itself ("starting"), so that no request meets a half-built router.
     */
    public boolean routesUp() {
        return installed && routesUp.get();
    }

    /** True once the context began to stop: readiness answers 503 from then on. */
    public boolean stopping() {
        return stopping.get();
    }

    @Override
    public boolean isEnabled(CamelEvent event) {
        return event instanceof CamelEvent.CamelContextRoutesStartingEvent
                || event instanceof CamelEvent.CamelContextStartedEvent
                || event instanceof CamelEvent.CamelContextStoppingEvent;
    }

    @Override
    public void notify(CamelEvent event) {
        CamelContext context = ((CamelEvent.CamelContextEvent) event).getContext();
        if (event instanceof CamelEvent.CamelContextStoppingEvent) {
            stopping.set(true);
            return;
        }
        install(context);
        if (event instanceof CamelEvent.CamelContextStartedEvent) {
            routesUp.set(true);
        }
    }

    private synchronized void install(CamelContext context) {
        if (installed) {
            return;
        }
        VertxPlatformHttpRouter router =
                VertxPlatformHttpRouter.lookup(context, VertxPlatformHttpRouter.getRouterNameFromPort(port));
        if (router == null) {
            return; // not up yet: the next event tries again
        }
        router.route().order(Integer.MIN_VALUE).handler(ctx -> {
            if (stopping.get() && ctx.request().path().equals("/readyz")) {
                // a load balancer moves traffic away before the port closes
                ctx.response().setStatusCode(503).putHeader("Content-Type", "text/plain; charset=utf-8")
                        .end("unavailable: stopping\n");
            } else if (stopping.get() && !paths.isReserved(ctx.request().path()) && !isGet(ctx)) {
                retryLater(ctx, "stopping");
            } else {
                ctx.next();
            }
        });
        router.route().last().handler(ctx -> {
            String path = ctx.request().path();
            boolean getPath = paths.isReserved(path);
            if (!routesUp.get() || stopping.get() || (!getPath && ctx.request().method().name().equals("POST"))) {
                // "starting" reaches here only under Camel JBang, whose listener is Camel's own: mcpd's listener
                // answers it before the router sees a request
                retryLater(ctx, routesUp.get() ? "not taking requests right now" : "starting");
                return;
            }
            if (path.equals("/") && isGet(ctx)) {
                ctx.response().putHeader("Content-Type", "text/plain; charset=utf-8").end(paths.index());
                return;
            }
            if (getPath && (isGet(ctx) || ctx.request().method().name().equals("HEAD"))) {
                ctx.response().setStatusCode(404).putHeader("Content-Type", "text/plain; charset=utf-8")
                        .end("no such page: GET / lists this port's pages\n");
                return;
            }
            String allow = getPath ? "GET" : "POST";
            ctx.response().setStatusCode(405).putHeader("Allow", allow)
                    .putHeader("Content-Type", "text/plain; charset=utf-8")
                    .end("this method is not allowed here: use " + allow + "\n"); // the method is not echoed
        });
        installed = true;
    }

    private static boolean isGet(RoutingContext ctx) {
        return ctx.request().method().name().equals("GET");
    }

    private static void retryLater(RoutingContext ctx, String why) {
        HttpServerResponse response = ctx.response();
        response.setStatusCode(503).putHeader("Retry-After", Integer.toString(IngestRefusal.RETRY_AFTER_SECONDS))
                .putHeader("Content-Type", "text/plain; charset=utf-8").end(why + "; retry later\n");
    }
}
