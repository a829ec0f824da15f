package dev.mcpd.upstream;

import dev.mcpd.config.InternalTuning;
import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with full jitter: after the n-th consecutive failure an upstream waits a random time between
 * zero and {@code min(cap, base × 2^(n-1))}. Full jitter spreads the retries of many relays and workers so that a
 * recovering collector is not hit by all of them at the same instant.
 */
public final class Backoff {

    private final Duration base;
    private final Duration cap;
    private final DoubleSupplier random;

    public Backoff(Duration base, Duration cap, DoubleSupplier random) {
        this.base = base;
        this.cap = cap;
        this.random = random;
    }

    public static Backoff standard() {
        return new Backoff(InternalTuning.DEFAULT.backoffBase(), InternalTuning.DEFAULT.backoffCap(), Math::random);
    }

    /** The ceiling of the wait after {@code consecutiveFailures} (≥ 1) failures in a row. */
    public Duration ceiling(int consecutiveFailures) {
        int doublings = Math.min(Math.max(consecutiveFailures - 1, 0), 30);
        long millis = base.toMillis() << doublings;
        return Duration.ofMillis(Math.min(millis, cap.toMillis()));
    }

    /** A wait drawn uniformly from [0, ceiling). */
    public Duration next(int consecutiveFailures) {
        return Duration.ofMillis((long) (random.getAsDouble() * ceiling(consecutiveFailures).toMillis()));
    }
}
