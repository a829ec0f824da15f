package dev.mcpd.http;

import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.logs.SenderText;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.time.Duration;
import java.util.function.Function;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a refusal ({@link IngestRefusal}, or any unexpected failure: 503) into its answer: the status, a one-line plain-text reason, {@code Retry-After} when
 * the sender should come back, and one log line (status, reason, method, path, remote address — never a key; what
 * the sender wrote quoted and cut short; at most one line per {@link IngestRefusal.Kind} per second). When part of the body
 * may still be on the connection (a 401, 405, 408 or 413 before the body was read), the HTTP/1.1 connection is closed
 * after the answer, so unread bytes are never parsed as a next request. A gRPC call is answered with the gRPC status
 * of its refusal ({@link GrpcAnswer}).
 */
public final class RefusalAnswer implements Processor {

    /** One line per kind of refusal per second at most (the count of the others rides on the next line). */
    private static final RateLimitedLog LOG =
            new RateLimitedLog(LoggerFactory.getLogger("dev.mcpd.ingest.refusals"), Duration.ofSeconds(1));
    private static final Logger FAULTS = LoggerFactory.getLogger(RefusalAnswer.class);

    /** What a role's own failures mean to a sender (the relay's spool: 503), or null for a failure it does not know. */
    private final Function<Throwable, IngestRefusal> roleRefusals;

    /** For a role whose steps fail only with refusals (and faults). */
    public RefusalAnswer() {
        this(failure -> null);
    }

    public RefusalAnswer(Function<Throwable, IngestRefusal> roleRefusals) {
        this.roleRefusals = roleRefusals;
    }

    @Override
    public void process(Exchange exchange) {
        IngestRefusal refusal = refusalFor(exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Exception.class));
        var request = VertxExchange.request(exchange);
        LOG.warn(refusal.kind().name(), "refused status=" + refusal.status() + " reason=\""
                + SenderText.quote(refusal.reason()) + "\" method=" + SenderText.quote(request.method().name())
                + " path=\"" + SenderText.quote(request.path()) + "\" remote="
                + (request.remoteAddress() == null ? "-" : request.remoteAddress().host()));
        if (refusal.kind() == IngestRefusal.Kind.SENDER_GONE) {
            gone(request);
            return;
        }
        if (GrpcCall.of(exchange) != null) {
            GrpcAnswer.refused(exchange, refusal);
        } else {
            Message answer = exchange.getMessage();
            Answers.line(answer, refusal.status(), refusal.reason());
            refusal.retryAfterSeconds().ifPresent(seconds -> answer.setHeader("Retry-After", seconds));
        }
        if (refusal.bodyUnread()) {
            unreadBodyAfterAnswer(request);
        }
    }

    private IngestRefusal refusalFor(Exception caught) {
        if (caught instanceof IngestRefusal known) {
            return known;
        }
        if (caught instanceof RouteRefusal byOperator) {
            return IngestRefusal.forbidden(byOperator.getMessage());
        }
        IngestRefusal roleRefusal = caught == null ? null : roleRefusals.apply(caught);
        if (roleRefusal != null) {
            return roleRefusal;
        }
        // A fault of ours, not the sender's: the full story goes to the log, and the sender is told to retry.
        FAULTS.error("unexpected failure while taking a request; answering 503", caught);
        return IngestRefusal.internal();
    }

    /**
     * What is left of a body refused before it was read. HTTP/1.x: the connection closes after the answer, so those
     * bytes are never parsed as a next request. HTTP/2: the rest of the stream's data is read and dropped (so none of
     * it is buffered while nobody reads it), and a stream still sending after {@link FrontDoor#LINGER_MAX_MILLIS} is
     * reset with {@code NO_ERROR} (RFC 9113 section 8.1: the sender stops sending).
     */
    private static void unreadBodyAfterAnswer(HttpServerRequest request) {
        if (request.isEnded()) {
            return; // read already (a GET's route reads its body), nothing left on the connection
        }
        request.handler(discarded -> { }); // drain what is in flight until the close (or the stream's end)
        request.exceptionHandler(ignored -> { });
        request.resume();
        if (request.version() != HttpVersion.HTTP_2) {
            FrontDoor.closeAfterAnswer(request);
            return;
        }
        Context context = Vertx.currentContext();
        if (context != null) {
            context.owner().setTimer(FrontDoor.LINGER_MAX_MILLIS, fired -> {
                if (!request.isEnded()) {
                    request.response().reset(0);
                }
            });
        }
    }

    /** Nobody to answer: the stream is reset (HTTP/2) or the connection closed, if that is not done already. */
    private static void gone(HttpServerRequest request) {
        if (request.response().closed()) {
            return;
        }
        if (request.version() == HttpVersion.HTTP_2) {
            request.response().reset(8); // CANCEL
        } else {
            request.connection().close();
        }
    }

    /** The front door's refusals go to the same log, rate-limited the same way. */
    static void logFrontDoorRefusal(String kind, String line) {
        LOG.warn(kind, line);
    }
}
