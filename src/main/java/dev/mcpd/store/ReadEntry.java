package dev.mcpd.collector;

import dev.mcpd.store.Archived;
import dev.mcpd.store.Batch;
import java.util.Optional;

/**
 * One entry of a relay batch at the collector: readable (a {@link Batch} to archive, then what archiving did) or
 * refused for good with its own status and one-line reason, as the same request sent alone would have been.
 */
final class RelayBatchEntry {

    private final Batch batch;
    private final int refusedStatus;
    private final String refusedReason;
    private Archived archived;

    private RelayBatchEntry(Batch batch, int refusedStatus, String refusedReason) {
        this.batch = batch;
        this.refusedStatus = refusedStatus;
        this.refusedReason = refusedReason;
    }

    static RelayBatchEntry readable(Batch batch) {
        return new RelayBatchEntry(batch, 0, null);
    }

    static RelayBatchEntry refused(int status, String reason) {
        return new RelayBatchEntry(null, status, reason);
    }

    Optional<Batch> batch() {
        return Optional.ofNullable(batch);
    }

    void archived(Archived what) {
        this.archived = what;
    }

    Optional<Archived> archived() {
        return Optional.ofNullable(archived);
    }

    int refusedStatus() {
        return refusedStatus;
    }

    String refusedReason() {
        return refusedReason;
    }
}
