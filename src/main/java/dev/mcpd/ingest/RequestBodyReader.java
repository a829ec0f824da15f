package dev.mcpd.ingest;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Reads the whole request body, byte for byte, whatever its content type, and makes it the message body
 * ({@code byte[]}).
 *
 * <p>Why not platform-http's own body handling: it turns form-encoded bodies into a Map, does not keep multipart
 * bodies byte-exact, gives {@code null} for an empty body, and answers its request timeout with 503 (see
 * CAMEL-NOTES). The ingest endpoint therefore runs with {@code useBodyHandler=false}, which hands over the paused
 * Vert.x request, and this step reads it: it refuses early on a {@code Content-Length} over {@code --max-body-bytes}
 * (413, before a byte of the body is read), stops a chunked body the moment it grows past the limit (413), and
 * answers 408 when the body has not arrived within {@code --request-timeout-seconds} of the request's arrival.
 */
public final class RequestBodyReader implements Processor {

    private static final class TooLarge extends RuntimeException {
        TooLarge() {
            super(null, null, false, false);
        }
    }

    private final long maxBodyBytes;
    private final Duration requestTimeout;

    public RequestBodyReader(long maxBodyBytes, Duration requestTimeout) {
        this.maxBodyBytes = maxBodyBytes;
        this.requestTimeout = requestTimeout;
    }

    @Override
    public void process(Exchange exchange) throws Exception {
        HttpServerRequest request = VertxExchange.request(exchange);
        long declared = declaredLength(request.getHeader("Content-Length"));
        if (declared > maxBodyBytes) {
            throw IngestRefusal.tooLarge(maxBodyBytes);
        }
        CompletableFuture<Buffer> whole = new CompletableFuture<>();
        Buffer body = Buffer.buffer((int) Math.max(0, Math.min(declared, 64 * 1024)));
        request.exceptionHandler(whole::completeExceptionally);
        request.handler(chunk -> {
            if ((long) body.length() + chunk.length() > maxBodyBytes) {
                request.pause();
                whole.completeExceptionally(new TooLarge());
            } else {
                body.appendBuffer(chunk);
            }
        });
        request.endHandler(end -> whole.complete(body));
        request.resume();
        // The time runs from the request's arrival (when its exchange was created), not from this step.
        long leftMillis = requestTimeout.toMillis() - exchange.getClock().elapsed();
        try {
            exchange.getIn().setBody(whole.get(Math.max(leftMillis, 0), TimeUnit.MILLISECONDS).getBytes());
        } catch (TimeoutException e) {
            request.pause();
            throw IngestRefusal.timedOut(requestTimeout.toSeconds());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TooLarge) {
                throw IngestRefusal.tooLarge(maxBodyBytes);
            }
            throw IngestRefusal.badRequest("request body could not be read: " + e.getCause().getMessage());
        }
    }

    private static long declaredLength(String contentLength) {
        if (contentLength == null) {
            return -1;
        }
        try {
            return Long.parseLong(contentLength.trim());
        } catch (NumberFormatException e) {
            throw IngestRefusal.badRequest("Content-Length is not a number");
        }
    }
}
