package dev.mcpd.http;

import io.vertx.core.http.HttpServerRequest;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * A request whose {@code Content-Length} is over {@code --max-body-bytes} is refused with 413 before anything else is
 * decided about it — before the spool's admission, so that a body that could never be taken is never told the spool is
 * full (a 503 its sender would retry for ever) nor counted as refused for space; a {@code Content-Length} that is not
 * a number is 400. For a gRPC call, the limit is its message's (behind a five-byte prefix).
 */
public final class BodySizeCheck implements Processor {

    private final long maxBodyBytes;

    public BodySizeCheck(long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public void process(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        long limit = GrpcCall.isGrpc(request) ? maxBodyBytes + GrpcMessageReader.PREFIX_BYTES : maxBodyBytes;
        if (declaredLength(request) > limit) {
            throw IngestRefusal.tooLarge(maxBodyBytes);
        }
    }

    /** The declared {@code Content-Length}, or -1 when there is none (chunked, HTTP/2 without one). */
    static long declaredLength(HttpServerRequest request) {
        String contentLength = request.getHeader("Content-Length");
        if (contentLength == null) {
            return -1;
        }
        try {
            long declared = Long.parseLong(contentLength.trim());
            if (declared < 0) {
                throw new NumberFormatException();
            }
            return declared;
        } catch (NumberFormatException e) {
            throw IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_CONTENT_LENGTH,
                    "Content-Length is not a number");
        }
    }
}
