package dev.mcpd.ingest;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.endpoint.SpoolMessage;
import dev.mcpd.http.Answers;
import dev.mcpd.http.GrpcAnswer;
import dev.mcpd.http.GrpcCall;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.routing.Resume;
import dev.mcpd.spool.EntryFates;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.spi.ShutdownPrepared;
import org.apache.camel.support.AsyncProcessorSupport;

/**
 * For a sender that asked with {@code mcpd-relay-wait}, after its entry is durable: waits for the
 * entry's fate up to the duration and answers with it — the upstream's own status, content type and body when
 * delivered ({@code mcpd-relay: delivered}), its refusal when dead-lettered ({@code mcpd-relay: dead-lettered}); when
 * the time is up, the ordinary answer stands ({@code mcpd-relay: spooled}). A gRPC call gets the upstream's response
 * message, or its refusal as a gRPC status.
 *
 * <p>A waiting sender holds no thread (the route resumes on its event loop when the fate is known or the time is up),
 * but its exchange and body stay in memory: at most {@link #MAX_WAITING} senders wait at once, and one more gets the
 * ordinary answer at once. A sender that hangs up while it waits gives its place back at that moment. A stop answers
 * every waiting sender at once with the ordinary answer (its entry is in the spool, delivered after the restart), and
 * every later one without a wait: the stop does not wait out anyone's duration.
 */
public final class AwaitedAnswer extends AsyncProcessorSupport implements ShutdownPrepared {

    /** Senders waiting at once, at most. */
    public static final int MAX_WAITING = InternalTuning.DEFAULT.maxRelayWaiters();

    private final EntryFates fates;
    private final Semaphore waiting = new Semaphore(MAX_WAITING);
    private final Set<CompletableFuture<Optional<EntryFates.Fate>>> outcomes = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;

    public AwaitedAnswer(EntryFates fates) {
        this.fates = fates;
    }

    /** Camel's graceful stop: every wait ends now with the ordinary answer; none begins any more. */
    @Override
    public void prepareShutdown(boolean suspendOnly, boolean forced) {
        if (suspendOnly) {
            return;
        }
        stopping = true;
        outcomes.forEach(outcome -> outcome.complete(Optional.empty()));
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        CompletableFuture<EntryFates.Fate> fate = SpoolMessage.fate(exchange).orElse(null);
        Duration wait = IngestExchange.wait(exchange).orElse(null);
        if (fate == null || wait == null) {
            callback.done(true);
            return true;
        }
        long seq = exchange.getMessage().getHeader(IngestAnswer.SEQ_HEADER, Long.class); // the 2xx answer's
        if (stopping || !waiting.tryAcquire()) {
            fates.forget(seq);
            callback.done(true);
            return true;
        }
        // Known, or empty: the time is up, or the sender hung up.
        CompletableFuture<Optional<EntryFates.Fate>> outcome = new CompletableFuture<>();
        outcomes.add(outcome);
        if (stopping) { // the stop came between the check above and the line above
            outcome.complete(Optional.empty());
        }
        fate.whenComplete((known, failure) -> outcome.complete(Optional.ofNullable(known)));
        HttpServerResponse response = VertxExchange.response(exchange);
        response.closeHandler(closed -> outcome.complete(Optional.empty()));
        Context context = Vertx.currentContext();
        if (context != null) {
            long timer = context.owner().setTimer(Math.max(1, wait.toMillis()),
                    fired -> outcome.complete(Optional.empty()));
            outcome.whenComplete((known, failure) -> context.owner().cancelTimer(timer));
        } else {
            outcome.completeOnTimeout(Optional.empty(), wait.toMillis(), TimeUnit.MILLISECONDS);
        }
        outcome.whenComplete((known, failure) -> {
            outcomes.remove(outcome);
            waiting.release();
            if (known.isEmpty()) {
                fates.forget(seq); // spooled, and delivered later
            }
        });
        return Resume.after(outcome, exchange, callback, (known, failure) -> known.ifPresent(f -> answer(exchange, f)));
    }

    private static void answer(Exchange exchange, EntryFates.Fate known) {
        Message answer = exchange.getMessage();
        Object seqHeader = answer.getHeader(IngestAnswer.SEQ_HEADER);
        Object idHeader = answer.getHeader(IngestAnswer.ID_HEADER);
        if (GrpcCall.of(exchange) != null) {
            answer = known.deadLettered() || known.status() / 100 != 2
                    ? GrpcAnswer.upstreamRefused(exchange, known.status(), firstLine(known.body()))
                    : GrpcAnswer.ok(exchange, known.contentType().startsWith("application/x-protobuf")
                            ? known.body() : new byte[0]);
        } else {
            answer = Answers.write(answer, known.status(), known.contentType().isEmpty()
                    ? "application/octet-stream" : known.contentType(), Answers.of(known.body()));
        }
        answer.setHeader("mcpd-relay", known.deadLettered() ? "dead-lettered" : "delivered");
        answer.setHeader(IngestAnswer.SEQ_HEADER, seqHeader);
        answer.setHeader(IngestAnswer.ID_HEADER, idHeader);
    }

    private static String firstLine(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8).strip();
        int end = text.indexOf('\n');
        String line = end < 0 ? text : text.substring(0, end).strip();
        return line.length() > 300 ? line.substring(0, 300) + "…" : line;
    }
}
