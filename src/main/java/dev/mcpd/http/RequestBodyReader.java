package dev.mcpd.http;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.routing.Resume;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
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
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;
import org.apache.camel.support.SynchronizationAdapter;

/**
 * Reads the whole request body, byte for byte, whatever its content type, and makes it the message body
 * ({@code byte[]}), without holding a thread while it arrives (see {@link Resume}).
 *
 * <p>Why not platform-http's own body handling: it turns form-encoded bodies into a Map, does not keep multipart
 * bodies byte-exact, gives {@code null} for an empty body, and answers its request timeout with 503. The ingest
 * endpoint therefore runs with {@code useBodyHandler=false}, which hands over the paused Vert.x request, and this step
 * reads it: a body that grows past {@code --max-body-bytes} is refused the moment it does (413; a declared
 * {@code Content-Length} over it was refused before, by {@link BodySizeCheck}), and one that has not arrived within
 * {@code --request-timeout-seconds} of the request's arrival gets 408 — or within {@link #FIRST_BYTE_DEADLINE} when
 * not one byte of it came.
 *
 * <p>Memory: a body with a {@code Content-Length} takes its whole room from the {@link BodyBudget} at its first byte
 * (not at its headers: a sender that declares much and sends nothing holds nothing) and is read into it; a body
 * without one is held chunk by chunk and joined once at the end (both held while they coexist). Held until the
 * exchange is over; a body that does not fit gets 503 with {@code Retry-After: 5} and lets go of its bytes at once.
 * Whole rooms are what let many large bodies arriving together be served first come, first served: held chunk by
 * chunk, each fills part of the budget, is refused for its next chunk, and none may be taken. A
 * sender that sent {@code Expect: 100-continue} is told to go on only here, after the key, size and spool checks.
 * A sender that resets its stream or closes its connection before its body is read is gone: no answer, one
 * rate-limited line.
 */
public final class RequestBodyReader extends AsyncProcessorSupport {

    /** A body of which not one byte came within this long (and within the request timeout) is a 408. */
    static final Duration FIRST_BYTE_DEADLINE = InternalTuning.DEFAULT.firstByteDeadline();

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

    private static final class ShorterThanDeclared extends RuntimeException {
        ShorterThanDeclared() {
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
        Reading reading;
        try {
            reading = startReading(exchange, request);
        } catch (RuntimeException e) {
            exchange.setException(e);
            callback.done(true);
            return true;
        }
        return Resume.after(reading.whole, exchange, callback, (body, failure) -> {
            if (failure == null) {
                exchange.getIn().setBody(body);
                return;
            }
            pauseQuietly(request);
            if (failure instanceof TimeoutException) {
                throw IngestRefusal.timedOut(reading.anyByte ? requestTimeout.toSeconds()
                        : Math.min(requestTimeout.toSeconds(), FIRST_BYTE_DEADLINE.toSeconds()));
            }
            if (failure instanceof TooLarge) {
                throw IngestRefusal.tooLarge(maxBodyBytes);
            }
            if (failure instanceof OverBudget || failure instanceof OutOfMemoryError) {
                throw overBudget();
            }
            if (!(failure instanceof ShorterThanDeclared) && VertxExchange.response(exchange).closed()) {
                throw IngestRefusal.senderGone();
            }
            throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_BODY, "request body could not be read");
        });
    }

    /** Stops reading; a request whose stream was reset (or connection closed) meanwhile has nothing to stop. */
    private static void pauseQuietly(HttpServerRequest request) {
        try {
            request.pause();
        } catch (IllegalStateException alreadyGone) {
            // "Request has already been read": reset or closed
        }
    }

    /** A body being read: its bytes, and whether any came yet. */
    private static final class Reading {
        final CompletableFuture<byte[]> whole = new CompletableFuture<>();
        /** The declared length, or -1 when the body comes without one. */
        final long declared;
        /** The whole body's room, when its length was declared: taken at its first byte. */
        byte[] room;
        /** The chunks so far, when its length was not declared. */
        final List<Buffer> chunks = new ArrayList<>(1);
        final AtomicLong held = new AtomicLong();
        long total;
        volatile boolean anyByte;

        Reading(long declared) {
            this.declared = declared;
        }
    }

    private Reading startReading(Exchange exchange, HttpServerRequest request) {
        // A gRPC call's body is its message behind a five-byte prefix; the limit is the message's.
        long limit = GrpcCall.of(exchange) == null ? maxBodyBytes : maxBodyBytes + GrpcMessageReader.PREFIX_BYTES;
        long declared = BodySizeCheck.declaredLength(request);
        if (declared > limit) {
            throw IngestRefusal.tooLarge(maxBodyBytes);
        }
        Reading reading = new Reading(declared);
        if (!take(reading, budget.perRequest())) {
            throw overBudget();
        }
        exchange.getExchangeExtension().addOnCompletion(new SynchronizationAdapter() {
            @Override
            public void onDone(Exchange done) {
                budget.give(reading.held.getAndSet(0));
            }
        });
        try {
            request.exceptionHandler(failure -> fail(reading, failure));
            request.handler(chunk -> take(reading, chunk, declared >= 0 ? declared : limit, request));
            request.endHandler(end -> finish(reading));
        } catch (IllegalStateException e) {
            // Vert.x says the request "has already been read": its stream was reset, or its connection closed.
            throw IngestRefusal.senderGone();
        }
        if (request.version() != HttpVersion.HTTP_1_0 && "100-continue".equalsIgnoreCase(request.getHeader("Expect"))) {
            VertxExchange.response(exchange).writeContinue();
        }
        // The time runs from the request's arrival (when its exchange was created), not from this step.
        long leftMillis = Math.max(1, requestTimeout.toMillis() - exchange.getClock().elapsed());
        long firstByteMillis = Math.min(leftMillis, FIRST_BYTE_DEADLINE.toMillis());
        Context context = Vertx.currentContext();
        if (context != null) {
            Vertx vertx = context.owner();
            long overall = vertx.setTimer(leftMillis, fired -> fail(reading, new TimeoutException()));
            long firstByte = declared == 0 ? -1 : vertx.setTimer(firstByteMillis, fired -> {
                if (!reading.anyByte) {
                    fail(reading, new TimeoutException());
                }
            });
            reading.whole.whenComplete((body, failure) -> {
                vertx.cancelTimer(overall);
                if (firstByte >= 0) {
                    vertx.cancelTimer(firstByte);
                }
            });
        } else {
            reading.whole.orTimeout(leftMillis, TimeUnit.MILLISECONDS);
        }
        request.resume();
        return reading;
    }

    /** One more chunk: within the limit (the declared length, or the maximum) and the budget, or the end of it. */
    private void take(Reading reading, Buffer chunk, long limit, HttpServerRequest request) {
        if (reading.whole.isDone()) {
            return;
        }
        reading.anyByte = true;
        if (reading.total + chunk.length() > limit) {
            pauseQuietly(request);
            fail(reading, new TooLarge());
        } else if (reading.declared >= 0) {
            if (reading.room == null && !makeRoom(reading)) {
                pauseQuietly(request);
                fail(reading, new OverBudget());
                return;
            }
            chunk.getBytes(0, chunk.length(), reading.room, (int) reading.total);
            reading.total += chunk.length();
        } else if (!take(reading, chunk.length())) {
            pauseQuietly(request);
            fail(reading, new OverBudget());
        } else {
            reading.chunks.add(chunk);
            reading.total += chunk.length();
        }
    }

    /** The declared body's whole room, if the budget (and the heap) has it now. */
    private boolean makeRoom(Reading reading) {
        if (!take(reading, reading.declared)) {
            return false;
        }
        try {
            reading.room = new byte[(int) reading.declared];
            return true;
        } catch (OutOfMemoryError e) {
            return false;
        }
    }

    private void finish(Reading reading) {
        if (reading.whole.isDone()) {
            return;
        }
        if (reading.declared >= 0) {
            if (reading.total != reading.declared) {
                fail(reading, new ShorterThanDeclared());
            } else {
                reading.whole.complete(reading.room == null ? new byte[0] : reading.room);
            }
            return;
        }
        if (reading.chunks.size() == 1) {
            reading.whole.complete(reading.chunks.get(0).getBytes());
            return;
        }
        // Joined once: the array and the chunks coexist for a moment, so the array is held against the budget too
        // until the chunks are let go.
        if (!take(reading, reading.total)) {
            fail(reading, new OverBudget());
            return;
        }
        byte[] body = new byte[(int) reading.total];
        int at = 0;
        for (Buffer chunk : reading.chunks) {
            chunk.getBytes(0, chunk.length(), body, at);
            at += chunk.length();
        }
        reading.chunks.clear();
        give(reading, reading.total);
        reading.whole.complete(body);
    }

    /** A body refused while it is read lets go of its bytes now, not when its answer has been written. */
    private void fail(Reading reading, Throwable failure) {
        if (reading.whole.isDone()) {
            return;
        }
        reading.room = null;
        reading.chunks.clear();
        budget.give(reading.held.getAndSet(0));
        reading.whole.completeExceptionally(failure);
    }

    private boolean take(Reading reading, long bytes) {
        if (!budget.tryTake(bytes)) {
            return false;
        }
        reading.held.addAndGet(bytes);
        return true;
    }

    private void give(Reading reading, long bytes) {
        reading.held.addAndGet(-bytes);
        budget.give(bytes);
    }

    private IngestRefusal overBudget() {
        return IngestRefusal.unavailableBeforeBody(IngestRefusal.Kind.MEMORY_BUSY, "too many request bodies are being"
                + " read at once (" + (budget.capacity() >> 20) + " MiB in memory); retry later");
    }
}
