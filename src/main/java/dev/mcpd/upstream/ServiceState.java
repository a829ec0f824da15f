package dev.mcpd.upstream;

import dev.mcpd.config.Options;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One upstream's service state, as load balancers keep it: checks — probes and deliveries — counted in a
 * row, so one slow answer does not flap it. It starts in service; {@code unhealthy} failed checks in a row take it
 * out, {@code healthy} successful ones in a row bring it back, and a check of the other kind starts the count again.
 * Not thread-safe: the board guards it.
 */
public final class ServiceState {

    /** How many checks in a row change the state. */
    public record Thresholds(int healthy, int unhealthy) {
        /** The options' defaults, not a copy of them. */
        static final Thresholds DEFAULT = new Thresholds(Options.HEALTHY_THRESHOLD.defaultValue().orElseThrow(),
                Options.UNHEALTHY_THRESHOLD.defaultValue().orElseThrow());
    }

    /** One check: a probe or a delivery, when, what it answered, and why it failed (or "" when it did not). */
    public record Check(Instant at, OptionalInt status, Duration latency, boolean success, String reason) {
    }

    enum Change { NONE, OUT_OF_SERVICE, BACK_IN_SERVICE }

    private final Thresholds thresholds;
    private boolean inService = true;
    private int successesInARow;
    private int failuresInARow;
    private long succeeded;
    private long failed;
    private Check last;

    public ServiceState(Thresholds thresholds) {
        this.thresholds = thresholds;
    }

    /** Counts the check; says whether it changed the state. */
    Change record(Check check) {
        last = check;
        if (check.success()) {
            succeeded++;
            successesInARow++;
            failuresInARow = 0;
            if (!inService && successesInARow >= thresholds.healthy()) {
                inService = true;
                return Change.BACK_IN_SERVICE;
            }
        } else {
            failed++;
            failuresInARow++;
            successesInARow = 0;
            if (inService && failuresInARow >= thresholds.unhealthy()) {
                inService = false;
                return Change.OUT_OF_SERVICE;
            }
        }
        return Change.NONE;
    }

    /** Whether the successes in a row are enough to call it healthy: back in service, or a backoff wait over. */
    boolean healthyRun() {
        return successesInARow >= thresholds.healthy();
    }

    boolean inService() {
        return inService;
    }

    int successesInARow() {
        return successesInARow;
    }

    int failuresInARow() {
        return failuresInARow;
    }

    long succeeded() {
        return succeeded;
    }

    long failed() {
        return failed;
    }

    Optional<Check> last() {
        return Optional.ofNullable(last);
    }

    Thresholds thresholds() {
        return thresholds;
    }
}
