package dev.mcpd.delivery;

import java.util.concurrent.ConcurrentSkipListSet;
import java.util.function.LongPredicate;

/**
 * Oldest first, always: an entry given back after a failed attempt goes out again before every entry received after
 * it. The spool hands such an entry out first, but a lane may already hold a newer one while it waits for an upstream
 * and a place in its window; so once a place is found, a shipment whose oldest entry is newer than one waiting to be
 * tried again gives its place up and goes back to the spool (behind it). An entry leaves this set when it is sent
 * again — or when it is no longer in the spool at all (expired into dead/ meanwhile, say), which is checked before a
 * shipment gives way to it.
 */
public final class OldestFirst {

    private final LongPredicate inSpool;
    private final ConcurrentSkipListSet<Long> retrying = new ConcurrentSkipListSet<>();

    /** @param inSpool whether an entry is still in the spool ({@code Spool::holds}) */
    public OldestFirst(LongPredicate inSpool) {
        this.inSpool = inSpool;
    }

    /** The entries of {@code shipment} failed on an upstream and go back: each is to be sent before newer ones. */
    void givenBackAfterFailure(Shipment shipment) {
        shipment.entries().forEach(entry -> retrying.add(entry.seq()));
    }

    /** Whether an entry older than {@code shipment}'s oldest, and not in it, waits to be tried again. */
    boolean mustWait(Shipment shipment) {
        long oldest = shipment.first().seq();
        for (Long seq = retrying.lower(oldest); seq != null; seq = retrying.lower(oldest)) {
            if (inSpool.test(seq)) {
                return true;
            }
            retrying.remove(seq); // it left the spool another way
        }
        return false;
    }

    /** The shipment goes out now: its entries are tried again. */
    void sending(Shipment shipment) {
        if (!retrying.isEmpty()) {
            shipment.entries().forEach(entry -> retrying.remove(entry.seq()));
        }
    }

    /** Entries waiting to be tried again before newer ones (tests, status). */
    int waiting() {
        return retrying.size();
    }
}
