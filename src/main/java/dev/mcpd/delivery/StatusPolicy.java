package dev.mcpd.delivery;

import java.util.Set;

/**
 * What an upstream's HTTP status means for delivery: delivered, retried, or refused for good.
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
public record StatusPolicy(boolean relayPresentsOwnKey, Set<Integer> retryable) {

    public StatusPolicy {
        retryable = Set.copyOf(retryable);
    }

    /** The policy with no {@code --retryable-status} codes. */
    public static StatusPolicy standard(boolean relayPresentsOwnKey) {
        return new StatusPolicy(relayPresentsOwnKey, Set.of());
    }

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
}
