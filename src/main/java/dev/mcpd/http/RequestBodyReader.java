package dev.mcpd.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.camel.Exchange;
import org.apache.camel.AsyncCallback;
import org.apache.camel.support.AsyncProcessorSupport;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.apache.camel.support.SynchronizationAdapter;

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
 *
 * <p>Memory: the body's bytes are held against the {@link BodyBudget} until the exchange is over; a body that does
 * not fit is refused with 503 and {@code Retry-After: 5} — before it is read when its {@code Content-Length} says so.
 * A body of known length is copied once, into an array of exactly its size; a chunked body is kept as its chunks and
 * joined once at the end (both held against the budget while they coexist). A sender that sent
 * {@code Expect: 100-continue} is told to go on only here, after the key, size and spool checks passed.
 */
public final class RequestBodyReader extends AsyncProcessorSupport {

    private static final class TooLarge extends RuntimeException {
        TooLarge() {
            super(null, null, false, false);
        }
    }

    private static final class OverBudget extends RuntimeException {
        OverBudget() {
            super(null, null, false, false);
        }
    }

    private final long maxBodyBytes;
    private final Duration requestTimeout;
    private final BodyBudget budget;

    public RequestBodyReader(long maxBodyBytes, Duration requestTimeout, BodyBudget budget) {
        this.maxBodyBytes = maxBodyBytes;
        this.requestTimeout = requestTimeout;
        this.budget = budget;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        HttpServerRequest request = VertxExchange.request(exchange);
        CompletableFuture<byte[]> whole;
        try {
            whole = startReading(exchange, request);
        } catch (RuntimeException e) {
            exchange.setException(e);
            callback.done(true);
            return true;
        }
        return Resume.after(whole, exchange, callback, (body, failure) -> {
            if (failure == null) {
                exchange.getIn().setBody(body);
                return;
            }
            if (failure instanceof TimeoutException) {
                request.pause();
                throw IngestRefusal.timedOut(requestTimeout.toSeconds());
            }
            if (failure instanceof TooLarge) {
                throw IngestRefusal.tooLarge(maxBodyBytes);
            }
            if (failure instanceof OverBudget || failure instanceof OutOfMemoryError) {
                throw overBudget(true);
            }
            throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_BODY, "request body could not be read");
        });
    }

    /** Checks what can be checked before the body arrives, and starts reading it. */
    private CompletableFuture<byte[]> startReading(Exchange exchange, HttpServerRequest request) {
        // A gRPC call's body is its message behind a five-byte prefix; the limit is the message's.
        long limit = GrpcCall.of(exchange) == null ? maxBodyBytes : maxBodyBytes + GrpcMessageReader.PREFIX_BYTES;
        long declared = declaredLength(request.getHeader("Content-Length"));
        if (declared > limit) {
            throw IngestRefusal.tooLarge(maxBodyBytes);
        }
        AtomicLong held = new AtomicLong();
        exchange.getExchangeExtension().addOnCompletion(new SynchronizationAdapter() {
            @Override
            public void onDone(Exchange done) {
                budget.give(held.getAndSet(0));
            }
        });
        if (declared > 0 && !take(held, declared)) {
            throw overBudget(true);
        }
        if (request.version() != HttpVersion.HTTP_1_0 && "100-continue".equalsIgnoreCase(request.getHeader("Expect"))) {
            VertxExchange.response(exchange).writeContinue();
        }
        CompletableFuture<byte[]> whole = declared >= 0
                ? readKnownLength(request, (int) declared)
                : readChunked(request, held, limit);
        // The time runs from the request's arrival (when its exchange was created), not from this step.
        long leftMillis = Math.max(1, requestTimeout.toMillis() - exchange.getClock().elapsed());
        Context context = Vertx.currentContext();
        if (context != null) {
            long timer = context.owner().setTimer(leftMillis, fired -> whole.completeExceptionally(new TimeoutException()));
            whole.whenComplete((body, failure) -> context.owner().cancelTimer(timer));
        } else {
            whole.orTimeout(leftMillis, TimeUnit.MILLISECONDS);
        }
        request.resume();
        return whole;
    }

    private CompletableFuture<byte[]> readKnownLength(HttpServerRequest request, int length) {
        CompletableFuture<byte[]> whole = new CompletableFuture<>();
        byte[] body;
        try {
            body = new byte[length];
        } catch (OutOfMemoryError e) {
            throw overBudget(true);
        }
        int[] filled = {0};
        request.exceptionHandler(whole::completeExceptionally);
        request.handler(chunk -> {
            int n = chunk.length();
            if (filled[0] + n > length) {
                // HTTP framing gives no more than Content-Length; should a chunk ever disagree, nothing is kept.
                request.pause();
                whole.completeExceptionally(new TooLarge());
                return;
            }
            chunk.getBytes(0, n, body, filled[0]);
            filled[0] += n;
        });
        request.endHandler(end -> {
            if (filled[0] == length) {
                whole.complete(body);
            } else {
                whole.completeExceptionally(new IllegalStateException("body shorter than its Content-Length"));
            }
        });
        return whole;
    }

    private CompletableFuture<byte[]> readChunked(HttpServerRequest request, AtomicLong held, long limit) {
        CompletableFuture<byte[]> whole = new CompletableFuture<>();
        List<Buffer> chunks = new ArrayList<>();
        long[] total = {0};
        request.exceptionHandler(whole::completeExceptionally);
        request.handler(chunk -> {
            if (whole.isDone()) {
                return;
            }
            if (total[0] + chunk.length() > limit) {
                request.pause();
                whole.completeExceptionally(new TooLarge());
            } else if (!take(held, chunk.length())) {
                request.pause();
                whole.completeExceptionally(new OverBudget());
            } else {
                chunks.add(chunk);
                total[0] += chunk.length();
            }
        });
        request.endHandler(end -> {
            if (whole.isDone()) {
                return;
            }
            // Joined once: the array and the chunks coexist for a moment, so the array is held against the budget
            // too until the chunks are let go.
            if (!take(held, total[0])) {
                whole.completeExceptionally(new OverBudget());
                return;
            }
            byte[] body = new byte[(int) total[0]];
            int at = 0;
            for (Buffer chunk : chunks) {
                chunk.getBytes(0, chunk.length(), body, at);
                at += chunk.length();
            }
            chunks.clear();
            give(held, total[0]);
            whole.complete(body);
        });
        return whole;
    }

    private boolean take(AtomicLong held, long bytes) {
        if (!budget.tryTake(bytes)) {
            return false;
        }
        held.addAndGet(bytes);
        return true;
    }

    private void give(AtomicLong held, long bytes) {
        held.addAndGet(-bytes);
        budget.give(bytes);
    }

    private IngestRefusal overBudget(boolean bodyUnread) {
        String reason = "too many request bodies are being read at once (" + (budget.capacity() >> 20)
                + " MiB in memory); retry later";
        return bodyUnread
                ? IngestRefusal.unavailableBeforeBody(IngestRefusal.Kind.MEMORY_BUSY, reason)
                : IngestRefusal.unavailable(reason);
    }

    private static long declaredLength(String contentLength) {
        if (contentLength == null) {
            return -1;
        }
        try {
            return Long.parseLong(contentLength.trim());
        } catch (NumberFormatException e) {
            throw IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_CONTENT_LENGTH,
                    "Content-Length is not a number");
        }
    }
}
