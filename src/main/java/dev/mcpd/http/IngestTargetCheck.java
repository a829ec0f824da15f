package dev.mcpd.http;

import dev.mcpd.wire.RequestTarget;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The first ingest step: reads the request target as a {@link RequestTarget} — an absolute path and query, normalised;
 * anything else is a 400 — and keeps it for the steps after, which never read the raw target again. Any POST is
 * ingest, except on the paths that belong to the process itself (probes, metrics, the role's own): 405. A gRPC
 * Export call's target is the OTLP/HTTP path it stands for ({@link GrpcCall}).
 */
public final class IngestTargetCheck implements Processor {

    /** Exchange property holding the request's {@link RequestTarget}. */
    private static final String PROPERTY = "mcpd.requestTarget";
    /** Message header for routes: the path and query as kept and forwarded ({@code /v1/ingest?tenant=a}). */
    public static final String TARGET_HEADER = "McpdTarget";

    private final RolePaths paths;

    public IngestTargetCheck(RolePaths paths) {
        this.paths = paths;
    }

    @Override
    public void process(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        RequestTarget target;
        try {
            target = RequestTarget.parse(GrpcCall.isGrpc(request) ? grpcEquivalent(exchange, request) : request.uri());
        } catch (RequestTarget.InvalidTarget e) {
            throw IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_TARGET, e.getMessage());
        }
        if (paths.isReserved(target.path())) {
            VertxExchange.response(exchange).putHeader("Allow", "GET");
            throw IngestRefusal.notAllowed("this path is not an ingest path; it answers GET");
        }
        exchange.setProperty(PROPERTY, target);
        // What routes after this step read (an operator's at an extension point among them) is the normalised target:
        // a check on the raw one could be stepped round with dot segments.
        exchange.getIn().setHeader(TARGET_HEADER, target.text());
        exchange.getIn().setHeader(Exchange.HTTP_URI, target.text());
        exchange.getIn().setHeader(Exchange.HTTP_PATH, target.path());
    }

    /**
     * The OTLP/HTTP path a gRPC Export call stands for; from here on the call is answered in gRPC's terms. Any other
     * method is refused ({@code UNIMPLEMENTED}), and a gRPC content type over HTTP/1.x is not a gRPC call (400).
     */
    private static String grpcEquivalent(Exchange exchange, HttpServerRequest request) {
        if (request.version() != HttpVersion.HTTP_2) {
            throw IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_FRAMING,
                    "a gRPC call (Content-Type: application/grpc) is carried by HTTP/2, not HTTP/1.x");
        }
        GrpcCall call = GrpcCall.of(request);
        GrpcCall.carry(exchange, call);
        IngestRefusal refused = call.refusal();
        if (refused != null) {
            throw refused;
        }
        return call.equivalentPath();
    }

    /** The target the first step read. */
    public static RequestTarget of(Exchange exchange) {
        RequestTarget target = exchange.getProperty(PROPERTY, RequestTarget.class);
        if (target == null) {
            throw new IllegalStateException("the ingest route reads the target first (ingestTargetCheck)");
        }
        return target;
    }
}
