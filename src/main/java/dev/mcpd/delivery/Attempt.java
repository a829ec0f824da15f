package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One delivery attempt to one upstream, and what it means ({@link StatusPolicy} classifies statuses).
 *
 * @param upstream   where it went
 * @param kind       delivered, retryable or permanent
 * @param status     the HTTP status, when the upstream answered at all
 * @param cause      one line saying what happened ("503", "connection refused", …)
 * @param retryAfter the wait the upstream named, if any
 * @param latency    from sending to the answer (or the failure)
 * @param answer     the answer's body (empty when there was none)
 * @param timedOut   no answer came in time
 */
public record Attempt(Upstream upstream, Kind kind, OptionalInt status, String cause, Optional<Duration> retryAfter,
                      Duration latency, byte[] answer, boolean timedOut) {

    public enum Kind {
        /** 2xx: the upstream took it. */
        DELIVERED,
        /** Refused, timeout, 408, 429, 5xx, a 401/403 to the relay's own key, a --retryable-status: later. */
        RETRYABLE,
        /** Any other 4xx: the same bytes would be refused anywhere; the entry goes to dead/. */
        PERMANENT
    }

    /** An attempt that did not time out. */
    public Attempt(Upstream upstream, Kind kind, OptionalInt status, String cause, Optional<Duration> retryAfter,
                   Duration latency, byte[] answer) {
        this(upstream, kind, status, cause, retryAfter, latency, answer, false);
    }

    /** This attempt, but counted as a retryable failure for {@code why}. */
    Attempt retryable(String why) {
        return new Attempt(upstream, Kind.RETRYABLE, status, why, retryAfter, latency, answer, timedOut);
    }

    /**
     * The upstream said it has more than it can take — a timeout, 408, 429, 503 or 504 — so its window shrinks. A
     * refused or reset connection, or another 5xx, says it is down or broken instead: it waits, and its window stays
     * as it was for when it is back.
     */
    public boolean saysOverloaded() {
        int code = status.orElse(0);
        return timedOut || code == 408 || code == 429 || code == 503 || code == 504;
    }

    /** The first {@code limit} bytes of the answer, for a dead letter's record. */
    public byte[] answerHead(int limit) {
        if (answer.length <= limit) {
            return answer;
        }
        return java.util.Arrays.copyOf(answer, limit);
    }
}
