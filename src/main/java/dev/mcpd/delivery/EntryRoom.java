package dev.mcpd.delivery;

import dev.mcpd.spool.ReadRoom;
import dev.mcpd.spool.SpoolEntry;

/**
 * The delivery budget as room for one entry a lane reads from the spool: taken for the entry's stored size as the
 * spool hands it out, then cut to its body once read — what the entry holds until its exchange completes.
 */
final class EntryRoom implements ReadRoom {

    private final DeliveryBudget budget;
    private long taken;

    EntryRoom(DeliveryBudget budget) {
        this.budget = budget;
    }

    @Override
    public boolean tryTake(long bytes) {
        if (!budget.tryTake(bytes)) {
            return false;
        }
        taken = bytes;
        return true;
    }

    @Override
    public boolean awaitRoom(long bytes, long deadlineNanos) throws InterruptedException {
        return budget.awaitRoom(bytes, deadlineNanos);
    }

    @Override
    public void giveBack(long bytes) {
        budget.give(bytes);
    }

    /** The entry read with the room taken last: it keeps room for its body, the rest of its stored size comes back. */
    void keepBody(SpoolEntry entry) {
        budget.give(taken - entry.request().body().length);
    }
}
