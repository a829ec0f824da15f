package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One delivery attempt to one upstream, and what it means ({@link AnswerPolicy} reads the answer).
 *
 * @param upstream    where it went
 * @param kind        delivered, retryable, permanent or unsendable
 * @param status      the HTTP status, when the upstream answered at all
 * @param cause       one line saying what happened ("503", "connection refused", …)
 * @param retryAfter  the wait the upstream named, if any
 * @param latency     from sending to the answer (or the failure)
 * @param answer      the answer's body (empty when there was none)
 * @param contentType the answer's content type, or null
 * @param overloaded  the upstream said it has more than it can take (no answer in time, 408, 429, 503, 504): its
 *                    window shrinks
 */
record Attempt(Upstream upstream, Kind kind, OptionalInt status, String cause, Optional<Duration> retryAfter,
               Duration latency, byte[] answer, String contentType, boolean overloaded) {

    enum Kind {
        /** 2xx: the upstream took it. */
        DELIVERED,
        /** Refused, timeout, 408, 429, 5xx, a 401/403 to the relay's own key, a --retryable-status: later. */
        RETRYABLE,
        /** Any other 4xx, or a Kafka broker's refusal of the record: it would be refused anywhere; to dead/. */
        PERMANENT,
        /** No request could be made of the entry: its fault, not the upstream's, which does not wait; to dead/. */
        UNSENDABLE
    }

    /** This attempt, but counted as a retryable failure for {@code why}. */
    Attempt retryable(String why) {
        return new Attempt(upstream, Kind.RETRYABLE, status, why, retryAfter, latency, answer, contentType, false);
    }

    /** The first {@code limit} bytes of the answer, for a dead letter's record. */
    byte[] answerHead(int limit) {
        if (answer.length <= limit) {
            return answer;
        }
        return Arrays.copyOf(answer, limit);
    }
}
