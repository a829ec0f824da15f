package dev.mcpd.ingest;

import io.vertx.core.http.HttpServerResponse;
import org.apache.camel.CamelContext;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;

/**
 * The 405 answer. Vert.x's own names no allowed method when routes are mounted the way platform-http mounts them (an
 * empty {@code Allow}) and has no body, and its error handlers for that sit on a root router platform-http keeps to
 * itself. So a last route, behind every Camel route, takes what none of them took: it says {@code Allow: GET} on the
 * probe, metrics, stats and {@code /relay/…} paths, {@code Allow: POST} on ingest paths, with one line of text.
 */
public final class MethodNotAllowed {

    private MethodNotAllowed() {
    }

    /** Adds the last route to the platform-http router of the given port, once Camel has started. */
    public static void answerOn(CamelContext context, int port) {
        VertxPlatformHttpRouter router =
                VertxPlatformHttpRouter.lookup(context, VertxPlatformHttpRouter.getRouterNameFromPort(port));
        if (router == null) {
            throw new IllegalStateException("no platform-http router for port " + port);
        }
        router.route().last().handler(ctx -> {
            String path = ctx.request().path();
            String allow = IngestPaths.isReserved(path) || path.equals("/v1/stats") ? "GET" : "POST";
            HttpServerResponse response = ctx.response();
            response.setStatusCode(405).putHeader("Allow", allow)
                    .putHeader("Content-Type", "text/plain; charset=utf-8")
                    .end(ctx.request().method() + " is not allowed here: use " + allow + "\n");
        });
    }
}
