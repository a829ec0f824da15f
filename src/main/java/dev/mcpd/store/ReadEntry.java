package dev.mcpd.store;

import java.util.Optional;

/**
 * A request read for the store from a relay batch's entry or a Kafka record: readable (a {@link Batch} to archive,
 * then what archiving did) or refused for good with its own status and one-line reason, as the same request sent
 * alone would have been.
 */
public final class ReadEntry {

    private final Batch batch;
    private final int refusedStatus;
    private final String refusedReason;
    private Archived archived;

    private ReadEntry(Batch batch, int refusedStatus, String refusedReason) {
        this.batch = batch;
        this.refusedStatus = refusedStatus;
        this.refusedReason = refusedReason;
    }

    public static ReadEntry readable(Batch batch) {
        return new ReadEntry(batch, 0, null);
    }

    public static ReadEntry refused(int status, String reason) {
        return new ReadEntry(null, status, reason);
    }

    public Optional<Batch> batch() {
        return Optional.ofNullable(batch);
    }

    public void archived(Archived what) {
        this.archived = what;
    }

    public Optional<Archived> archived() {
        return Optional.ofNullable(archived);
    }

    public int refusedStatus() {
        return refusedStatus;
    }

    public String refusedReason() {
        return refusedReason;
    }
}
