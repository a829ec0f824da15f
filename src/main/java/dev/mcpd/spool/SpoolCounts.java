package dev.mcpd.spool;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the spool holds, counted as entries go in and out: the gauges and the status page read these without the
 * ledger's lock. An entry that leaves gives its bytes back to the spool's bound, so a sender waiting on a full spool
 * can write again.
 */
final class SpoolCounts {

    private final SpoolBound bound;
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong corrupted = new AtomicLong();

    SpoolCounts(SpoolBound bound, SpoolRecovery.Recovered recovered) {
        this.bound = bound;
        entries.set(recovered.entries());
        bytes.set(recovered.bytes());
        corrupted.set(recovered.corrupted());
    }

    /** An entry made durable. */
    void added(EntryLocation entry) {
        entries.incrementAndGet();
        bytes.addAndGet(entry.size());
    }

    /** {@code count} entries of {@code size} bytes in all left the spool: delivered, dead-lettered or lost. */
    void left(long count, long size) {
        entries.addAndGet(-count);
        bytes.addAndGet(-size);
        bound.giveBack(size);
    }

    /** The count of damaged records kept in corrupt/, which a scan of a segment adds to. */
    AtomicLong corruptedCount() {
        return corrupted;
    }

    long entries() {
        return entries.get();
    }

    long bytes() {
        return bytes.get();
    }

    long corrupted() {
        return corrupted.get();
    }
}
