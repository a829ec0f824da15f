package dev.mcpd.upstream;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What the board knows of one upstream; a copy, safe to read anywhere. Its parts are the parts of
 * {@code /relay/status}'s entry for it.
 *
 * @param waiting while it waits: until when, and why
 */
public record UpstreamView(Upstream upstream, Optional<Waiting> waiting, Answers answers, Traffic traffic,
                           Checks checks) {

    public record Waiting(Instant until, String cause) {
    }

    /**
     * How it answered deliveries (and, for {@code lastUp} and {@code up}, probes).
     *
     * @param delivered      entries it took
     * @param failedAttempts entries it did not take, retryably or for good
     */
    public record Answers(int consecutiveFailures, OptionalInt lastStatus, Optional<Duration> lastLatency,
                          Optional<Instant> lastAnswer, Optional<Instant> lastUp, boolean up, long delivered,
                          long failedAttempts) {
    }

    /**
     * The requests it carries.
     *
     * @param window   how many requests may be in flight to it now (its adaptive limit)
     * @param inFlight how many are
     * @param protocol the HTTP version of its latest answer ({@code h1}, {@code h2}), or {@code unknown};
     *                 {@code kafka} for a Kafka topic
     * @param batches  whether it takes relay batches (its probe said so)
     * @param requests requests sent to it (a relay batch is one; {@code delivered} counts entries)
     */
    public record Traffic(int window, int inFlight, String protocol, boolean batches, long requests) {
    }

    /**
     * Its health checks (probes and deliveries) and the service state they decide.
     *
     * @param passiveBecause why its probes are no checks (its probe path is not served, or it is not probed)
     */
    public record Checks(boolean inService, Optional<String> passiveBecause, int successesInARow,
                         int failuresInARow, long succeeded, long failed, Optional<ServiceState.Check> last) {
    }

    /**
     * The one word an operator reads first: {@code waiting} while in a wait; else {@code out-of-service} when its
     * checks took it out; else {@code up} when it answered lately; else {@code down}. Only {@code up} counts for
     * {@code /readyz}.
     */
    public String state() {
        return waiting.isPresent() ? "waiting" : !checks.inService() ? "out-of-service"
                : answers.up() ? "up" : "down";
    }
}
