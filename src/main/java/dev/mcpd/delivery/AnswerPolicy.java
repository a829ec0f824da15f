package dev.mcpd.delivery;

import dev.mcpd.logs.RootCause;
import dev.mcpd.upstream.RetryAfter;
import dev.mcpd.upstream.Upstream;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * What an upstream's answer means — the one place that reads it. A status is delivered, retried, or refused for good;
 * a failure with no status is retried, unless no request could be made of the entry at all (unsendable) or a Kafka
 * broker refused the record for good; a timeout, 408, 429, 503 or 504 also says the upstream is overloaded.
 *
 * <p>A 401/403 while the relay presents its own {@code --upstream-key} is the relay's configuration error, not the
 * sender's, so it is retried: a wrong key must never empty the spool into dead/. Statuses that are neither success
 * nor a client error (1xx, 3xx — redirects are not followed) are retried as well: they say the upstream URL is wrong,
 * which an operator can fix, not that the request is. The operator's {@code --retryable-status} codes are 4xx an
 * upstream uses for a passing state (409 while a tenant is created, 425): retried like a 5xx.
 *
 * @param relayPresentsOwnKey whether the relay sends its own {@code --upstream-key}
 * @param retryable           4xx codes retried rather than dead-lettered ({@code --retryable-status})
 */
public record AnswerPolicy(boolean relayPresentsOwnKey, Set<Integer> retryable) {

    public AnswerPolicy {
        retryable = Set.copyOf(retryable);
    }

    /** The policy with no {@code --retryable-status} codes. */
    public static AnswerPolicy standard(boolean relayPresentsOwnKey) {
        return new AnswerPolicy(relayPresentsOwnKey, Set.of());
    }

    /** What a status means, for a whole request or for one entry of a relay batch. */
    public Attempt.Kind classify(int status) {
        if (status >= 200 && status < 300) {
            return Attempt.Kind.DELIVERED;
        }
        if (status == 408 || status == 429 || status >= 500 || retryable.contains(status)) {
            return Attempt.Kind.RETRYABLE;
        }
        if ((status == 401 || status == 403) && relayPresentsOwnKey) {
            return Attempt.Kind.RETRYABLE;
        }
        if (status >= 400 && status < 500) {
            return Attempt.Kind.PERMANENT;
        }
        return Attempt.Kind.RETRYABLE;
    }

    /**
     * The upstream said it has more than it can take, so its window shrinks. A refused or reset connection, or
     * another 5xx, says it is down or broken instead: it waits, and its window stays as it was for when it is back.
     */
    static boolean saysOverloaded(int status) {
        return status == 408 || status == 429 || status == 503 || status == 504;
    }

    /** The attempt that got {@code answer} from {@code upstream} after {@code latency}, and what it means. */
    Attempt judge(Upstream upstream, UpstreamAnswer answer, Duration latency, Instant now) {
        Throwable failure = answer.failure();
        if (failure == null) {
            int status = answer.status();
            return new Attempt(upstream, classify(status), OptionalInt.of(status), Integer.toString(status),
                    RetryAfter.parse(answer.retryAfter(), now), latency, answer.body(), answer.contentType(),
                    saysOverloaded(status));
        }
        if (failure instanceof KafkaFailures.Refused refused) {
            // The broker refused the record for good: it would refuse it again, from any relay.
            return failed(upstream, Attempt.Kind.PERMANENT, refused.getMessage(), latency, false);
        }
        Optional<String> unbuildable = requestNotBuilt(failure);
        if (unbuildable.isPresent()) {
            return failed(upstream, Attempt.Kind.UNSENDABLE, unbuildable.get(), latency, false);
        }
        boolean timedOut = isTimeout(failure);
        return failed(upstream, Attempt.Kind.RETRYABLE, describe(failure, timedOut), latency, timedOut);
    }

    private static Attempt failed(Upstream upstream, Attempt.Kind kind, String cause, Duration latency,
                                  boolean overloaded) {
        return new Attempt(upstream, kind, OptionalInt.empty(), cause, Optional.empty(), latency,
                UpstreamAnswer.NO_BODY, null, overloaded);
    }

    /**
     * Why the HTTP client could not even make a request of the entry, when that is what failed: the client reports
     * it as an {@link IllegalArgumentException} or a {@link URISyntaxException} before it opens a connection. A
     * failure of the connection or of the upstream's answer is an {@link IOException} or a timeout, and is retried.
     */
    private static Optional<String> requestNotBuilt(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof IOException || cause instanceof TimeoutException) {
                return Optional.empty();
            }
            if (cause instanceof IllegalArgumentException || cause instanceof URISyntaxException) {
                return Optional.of("the HTTP client could not make a request of it ("
                        + cause.getClass().getSimpleName() + ")");
            }
        }
        return Optional.empty();
    }

    private static boolean isTimeout(Throwable failure) {
        Throwable root = RootCause.of(failure);
        return root instanceof SocketTimeoutException || root instanceof TimeoutException;
    }

    /** One line for a transport failure: "connection refused", "timeout: …", a TLS handshake in plain words… */
    private static String describe(Throwable failure, boolean timedOut) {
        Optional<String> tls = TlsFailure.explain(failure);
        if (tls.isPresent()) {
            return tls.get();
        }
        Throwable root = RootCause.of(failure);
        if (timedOut) {
            return "timeout: " + root.getMessage();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
