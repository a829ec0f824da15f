package dev.mcpd.config;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The collector's work that runs once for all replicas of a store, on the one that holds the lease.
 *
 * @param leasePass   how often the holder renews the lease, and the others try to take it
 *                    ({@code --lease-pass-seconds}); the lease expires three passes after its last renewal
 * @param dedupWindow idempotency keys older than this are forgotten: a re-send later than it is stored again
 *                    ({@code --dedup-window})
 * @param retention   archived batches older than this are deleted; empty: kept for ever ({@code --retention})
 */
public record StoreUpkeep(Duration leasePass, Duration dedupWindow, Optional<Duration> retention) {

    /** A pass longer than ten minutes would leave a dead holder's work undone for half an hour. */
    public static final long MAX_LEASE_PASS_SECONDS = 600;
    /** Ten years: longer is surely a slip of the unit. */
    static final Duration MAX_WINDOW = Duration.ofDays(3660);

    /** The passes after its last renewal at which a lease expires. */
    public static final int PASSES_TO_EXPIRY = 3;

    public StoreUpkeep {
        Objects.requireNonNull(leasePass, "leasePass");
        Objects.requireNonNull(dedupWindow, "dedupWindow");
        Objects.requireNonNull(retention, "retention");
        Duration pass = leasePass;
        Duration window = dedupWindow;
        OptionValues.check(Options.LEASE_PASS_SECONDS, () -> checkLeasePass(pass.toSeconds()));
        OptionValues.check(Options.DEDUP_WINDOW, () -> checkWindow(window));
        retention.ifPresent(age -> OptionValues.check(Options.RETENTION, () -> checkWindow(age)));
    }

    /** The defaults: a 10 s pass, keys kept 7 days, batches for ever. */
    public static StoreUpkeep defaults() {
        return new StoreUpkeep(Duration.ofSeconds(10), Duration.ofDays(7), Optional.empty());
    }

    /** How long after its last renewal the lease is free for another replica. */
    public Duration leaseTerm() {
        return leasePass.multipliedBy(PASSES_TO_EXPIRY);
    }

    static Duration checkLeasePass(long seconds) {
        if (seconds < 1 || seconds > MAX_LEASE_PASS_SECONDS) {
            throw new IllegalArgumentException(seconds + " s is out of range: use 1 to " + MAX_LEASE_PASS_SECONDS);
        }
        return Duration.ofSeconds(seconds);
    }

    static Duration checkWindow(Duration window) {
        if (window.compareTo(Duration.ofMinutes(1)) < 0 || window.compareTo(MAX_WINDOW) > 0) {
            throw new IllegalArgumentException(DurationText.format(window) + " is out of range: use 1m to 3660d");
        }
        return window;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        return "lease renewed every " + leasePass.toSeconds() + " s (free " + leaseTerm().toSeconds()
                + " s after the holder's last pass); keys kept " + DurationText.format(dedupWindow) + "; batches "
                + retention.map(age -> "kept " + DurationText.format(age)).orElse("kept for ever");
    }
}
