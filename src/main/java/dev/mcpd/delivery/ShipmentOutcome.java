package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.Upstream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * How a delivery exchange ends, for each entry of its shipment: delivered, kept in dead/, or given back to the spool
 * (and, when its request could not go as one, how many entries the request that carries it next may hold). Every
 * exchange that completes carries one: the dead-letter step keeps the refused entries, the after-delivery step hands
 * on the delivered ones, and the spool consumer removes the first two kinds from the spool and gives back the third.
 *
 * @param upstream     the upstream the request went to, when it went
 * @param fates        one per entry, in the shipment's order
 * @param upstreamFailed the upstream failed the whole request retryably: its entries go next to another upstream
 */
record ShipmentOutcome(Optional<Upstream> upstream, List<Fate> fates, boolean upstreamFailed) {

    /** Entries per request when nothing limits them. */
    static final int AS_PACKED = Integer.MAX_VALUE;

    sealed interface Fate permits Delivered, DeadLettered, GivenBack {
        SpoolEntry entry();
    }

    /**
     * @param status the status of the request that carried it
     * @param answer the upstream's answer to that request
     */
    record Delivered(SpoolEntry entry, int status, byte[] answer) implements Fate {
    }

    record DeadLettered(SpoolEntry entry, PermanentRefusal why) implements Fate {
    }

    /** @param sendAtMost how many entries the request that carries it next may hold (1: alone) */
    record GivenBack(SpoolEntry entry, int sendAtMost) implements Fate {
    }

    ShipmentOutcome {
        fates = Collections.unmodifiableList(fates); // built here, once: no copy on every delivery
    }

    /** Every entry goes back to the spool, to be packed as before. */
    static ShipmentOutcome givenBack(Shipment shipment) {
        return givenBack(shipment, AS_PACKED);
    }

    /** Every entry goes back, to travel next in requests of at most {@code sendAtMost} entries. */
    static ShipmentOutcome givenBack(Shipment shipment, int sendAtMost) {
        return new ShipmentOutcome(Optional.empty(),
                shipment.entries().stream().<Fate>map(e -> new GivenBack(e, sendAtMost)).toList(), false);
    }

    /** The entries of a request the upstream failed retryably: back to the spool, then to the next upstream. */
    static ShipmentOutcome retryElsewhere(Shipment shipment, Upstream upstream) {
        return new ShipmentOutcome(Optional.of(upstream),
                shipment.entries().stream().<Fate>map(e -> new GivenBack(e, AS_PACKED)).toList(), true);
    }

    /** A lone entry that goes to dead/ without an upstream's answer (unsendable, or waited too long). */
    static ShipmentOutcome deadLettered(SpoolEntry entry, PermanentRefusal why) {
        return new ShipmentOutcome(Optional.empty(), List.of(new DeadLettered(entry, why)), false);
    }

    List<Delivered> delivered() {
        return of(Delivered.class);
    }

    List<DeadLettered> deadLettered() {
        return of(DeadLettered.class);
    }

    List<GivenBack> givenBack() {
        return of(GivenBack.class);
    }

    /** Made lazily: the dead-letter step asks every exchange, and almost none has a dead letter. */
    private <T extends Fate> List<T> of(Class<T> kind) {
        List<T> found = List.of();
        for (Fate fate : fates) {
            if (kind.isInstance(fate)) {
                if (found.isEmpty()) {
                    found = new ArrayList<>(fates.size());
                }
                found.add(kind.cast(fate));
            }
        }
        return found;
    }
}
