package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.DeliveryStopped;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamWindow;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * The first step of a delivery: the upstream a lane's entries go to, and a place in its window — before anything is
 * packed or built, so that they are packed for the upstream that takes them. The choice is ordered failover with
 * per-upstream waits and windows: the first upstream that is not waiting, once its window has a place; an entry that
 * failed on an upstream moves on to the next one untried ({@link UpstreamBoard#awaitReady}). The state Camel's own
 * failover load balancer lacks — which upstream waits, until when, how many requests it may have in flight — lives in
 * the {@link UpstreamBoard}.
 *
 * <p>Oldest first, always: when a place is found while an older entry waits to be tried again, the place is given up
 * and the entries go back behind it. Entries that waited for an upstream past {@code --spool-max-age} are decided
 * here too — a lone one goes to dead/ as expired — and so is a stop: the entries stay in the spool.
 */
final class UpstreamChoice {

    private static final Duration STOP_CHECK = Duration.ofMillis(250);

    /** Where a lane's entries go, or what becomes of them without a request. */
    sealed interface Choice permits Chosen, Decided {
    }

    /** The upstream, and the place in its window the request holds until its answer is judged. */
    record Chosen(Upstream upstream, UpstreamWindow.Slot slot) implements Choice {
    }

    /** No request: the outcome is decided already (given back, or to dead/ as expired). */
    record Decided(ShipmentOutcome outcome) implements Choice {
    }

    private final UpstreamBoard board;
    private final SpoolExpiry expiry;
    private final EntryRecords records;

    UpstreamChoice(UpstreamBoard board, SpoolExpiry expiry, EntryRecords records) {
        this.board = board;
        this.expiry = expiry;
        this.records = records;
    }

    /**
     * The upstream for {@code entries} — a lane's oldest entry, or an ordered stream's turn — and a place in its
     * window; waits for both as long as it takes, unless the relay stops or an entry expires meanwhile.
     *
     * @param ordered  the entries are an ordered stream's turn: given back after expiring, they go alone next time
     * @param stopping whether the relay is stopping
     */
    Choice choose(List<SpoolEntry> entries, boolean ordered, BooleanSupplier stopping) throws InterruptedException {
        Shipment waiting = entries.size() == 1 ? Shipment.single(entries.get(0)) : Shipment.batchOf(entries);
        long oldest = entries.get(0).seq();
        Set<Integer> tried = records.failedOn(oldest);
        boolean failedBefore = !tried.isEmpty();
        try {
            while (true) {
                Upstream upstream = board.awaitReady(tried, () -> stopping.getAsBoolean()
                        || expiry.anyExpired(waiting), STOP_CHECK);
                if (failedBefore && tried.isEmpty()) {
                    records.movedOn(oldest); // every upstream failed it: it goes round again
                    failedBefore = false;
                }
                Optional<UpstreamWindow.Slot> place = board.window(upstream).acquire();
                if (place.isPresent() && records.olderWaitsToRetry(oldest)) {
                    // An older entry failed and waits to be tried again: it goes first, these behind it.
                    place.get().unused();
                    return new Decided(ShipmentOutcome.givenBack(waiting));
                }
                if (place.isPresent()) {
                    return new Chosen(upstream, place.get());
                }
                if (stopping.getAsBoolean()) {
                    throw new DeliveryStopped();
                }
            }
        } catch (DeliveryStopped e) {
            if (!stopping.getAsBoolean() && expiry.anyExpired(waiting)) {
                // Waited for an upstream past --spool-max-age: a lone entry goes to dead/ as expired; a stream's turn
                // goes back to its stream, to go alone (no expiry sweep sees what a stream holds).
                return new Decided(entries.size() > 1 ? ShipmentOutcome.givenBack(waiting, ordered ? 1
                        : ShipmentOutcome.AS_PACKED) : ShipmentOutcome.deadLettered(entries.get(0),
                        expiry.refusal(entries.get(0))));
            }
            return new Decided(ShipmentOutcome.givenBack(waiting));
        }
    }

    /**
     * A place for another shipment packed for {@code upstream} from the same lane's entries: only while that upstream
     * is still the one to send to and no older entry waits to be tried again; empty otherwise (the shipment goes back
     * to the spool, to be packed again for whichever upstream comes next).
     */
    Optional<UpstreamWindow.Slot> anotherPlace(Upstream upstream, Shipment shipment, BooleanSupplier stopping) {
        while (!stopping.getAsBoolean() && board.firstReady().filter(upstream::equals).isPresent()) {
            Optional<UpstreamWindow.Slot> place = board.window(upstream).acquire();
            if (place.isPresent() && records.olderWaitsToRetry(shipment.first().seq())) {
                place.get().unused();
                return Optional.empty();
            }
            if (place.isPresent()) {
                return place;
            }
        }
        return Optional.empty();
    }
}
