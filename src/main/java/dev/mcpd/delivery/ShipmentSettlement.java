package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.UpstreamWindow;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.camel.Exchange;
import org.apache.camel.spi.Synchronization;
import org.apache.camel.support.SynchronizationAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last step of a delivery, once its exchange has completed — whichever thread the answer came back on: each entry
 * delivered or kept in dead/ leaves the spool (for an ordered stream, durably, before the stream's next turn); each
 * given back returns to it first in line (or to its stream), with the most entries the request that carries it next
 * may hold; when something failed that is not the upstream's answer, the entries go back after a pause, so a broken
 * entry cannot spin. Holds no state of its own: what it settles is in the spool, the streams and the entries' records.
 */
final class ShipmentSettlement {

    private static final Logger LOG = LoggerFactory.getLogger(SpoolConsumer.class); // the lines operators know
    /** An entry that failed unexpectedly goes out again only after this, so a broken entry cannot spin. */
    static final Duration AFTER_FAULT = Duration.ofSeconds(1);

    private final Spool spool;
    private final DeliveryBudget budget;
    private final EntryRecords records;
    private final OrderedStreams streams;
    private final Consumer<List<SpoolEntry>> nextTurn;
    /** Runs what waits for a pause; none while delivery is stopped (what would wait is given back at once). */
    private volatile ScheduledExecutorService retries;

    /** @param nextTurn starts an ordered stream's next turn, on a thread that may wait */
    ShipmentSettlement(Spool spool, DeliveryBudget budget, EntryRecords records, OrderedStreams streams,
                       Consumer<List<SpoolEntry>> nextTurn) {
        this.spool = spool;
        this.budget = budget;
        this.records = records;
        this.streams = streams;
        this.nextTurn = nextTurn;
    }

    /** What runs after a pause runs on {@code scheduler} from now on (null: delivery stopped). */
    void retryOn(ScheduledExecutorService scheduler) {
        this.retries = scheduler;
    }

    /** Settles {@code shipment} when its exchange completes. */
    Synchronization of(Shipment shipment) {
        return new Completion(shipment);
    }

    /** Entries out of the spool, given back to it: first in line, their share of the budget freed. */
    void giveBack(List<SpoolEntry> entries) {
        for (SpoolEntry entry : entries) {
            budget.give(entry.request().body().length);
            spool.release(entry.seq());
        }
    }

    /**
     * Once a shipment's exchange has completed: each entry delivered or kept in dead/ leaves the spool; each given
     * back returns to it, first in line, with the most entries the request that carries it next may hold.
     */
    private final class Completion extends SynchronizationAdapter {
        private final Shipment shipment;

        Completion(Shipment shipment) {
            this.shipment = shipment;
        }

        @Override
        public void onComplete(Exchange exchange) {
            Optional<ShipmentOutcome> outcome = DeliveryExchange.outcome(exchange);
            if (outcome.isEmpty()) {
                DeliveryExchange.slot(exchange).ifPresent(UpstreamWindow.Slot::unused);
                afterFault("it ended without an outcome"); // every step that ends an exchange gives it one
                return;
            }
            if (streams.ordered(shipment)) {
                settleStream(outcome.get());
                return;
            }
            budget.give(shipment.bytes());
            List<ShipmentOutcome.Fate> fates = outcome.get().fates();
            long[] finished = new long[fates.size()];
            int count = 0;
            for (ShipmentOutcome.Fate fate : fates) {
                long seq = fate.entry().seq();
                if (fate instanceof ShipmentOutcome.GivenBack back) {
                    records.sendAtMost(seq, back.sendAtMost());
                    spool.release(seq);
                    continue;
                }
                records.finished(seq);
                finished[count++] = seq;
            }
            if (count > 0) {
                leaveTheSpool(finished, count);
            }
        }

        /** The first {@code count} of {@code finished} were delivered, or kept in dead/: they leave the spool. */
        private void leaveTheSpool(long[] finished, int count) {
            try {
                spool.done(finished, count);
            } catch (IOException | RuntimeException e) {
                LOG.error("seq={}{} delivered, not all removed from the spool: {}", finished[0],
                        count > 1 ? " and " + (count - 1) + " more" : "", e.toString());
            }
        }

        @Override
        public void onFailure(Exchange exchange) {
            DeliveryExchange.slot(exchange).ifPresent(UpstreamWindow.Slot::unused); // a place never judged: freed
            afterFault(String.valueOf(exchange.getException()));
        }

        /**
         * An ordered stream's shipment is settled: what left the spool (delivered, or kept in dead/) is made durable
         * first — a restart or power cut must never send it again after a newer entry of its stream was delivered —
         * and then the stream's next shipment starts: what was given back first, else what waits behind it. Entries
         * given back stay with the stream, holding their share of the budget.
         */
        private void settleStream(ShipmentOutcome outcome) {
            List<SpoolEntry> givenBack = new ArrayList<>();
            long[] finished = new long[outcome.fates().size()];
            int count = 0;
            for (ShipmentOutcome.Fate fate : outcome.fates()) {
                SpoolEntry entry = fate.entry();
                if (fate instanceof ShipmentOutcome.GivenBack back) {
                    records.sendAtMost(entry.seq(), back.sendAtMost());
                    givenBack.add(entry);
                    continue;
                }
                budget.give(entry.request().body().length);
                records.finished(entry.seq());
                finished[count++] = entry.seq();
            }
            String stream = OrderedStreams.streamOf(shipment.first().request());
            if (count == 0) {
                nextTurn.accept(streams.settled(stream, givenBack));
                return;
            }
            leaveTheSpool(finished, count);
            whenDurable(stream, givenBack);
        }

        /** Once the spool's record of what left is on disk, the stream's next turn; until then it waits. */
        private void whenDurable(String stream, List<SpoolEntry> givenBack) {
            spool.doneDurably().whenComplete((durable, failure) -> {
                if (failure == null) {
                    nextTurn.accept(streams.settled(stream, givenBack));
                    return;
                }
                LOG.error("the record of deliveries of an ordered stream could not be forced ({}): its next entries"
                        + " wait, and it is tried again in {} s", failure.getMessage(), AFTER_FAULT.toSeconds());
                ScheduledExecutorService scheduler = retries;
                if (scheduler != null && !scheduler.isShutdown()) {
                    scheduler.schedule(() -> whenDurable(stream, givenBack), AFTER_FAULT.toMillis(),
                            TimeUnit.MILLISECONDS);
                } else {
                    giveBack(streams.settled(stream, givenBack));
                }
            });
        }

        /** Something failed that is not the upstream's answer: the entries go out again after a pause. */
        private void afterFault(String what) {
            LOG.error("delivery of seq={}{} failed and it stays in the spool: {}", shipment.first().seq(),
                    shipment.size() > 1 ? " and " + (shipment.size() - 1) + " more" : "", what);
            ScheduledExecutorService scheduler = retries;
            if (scheduler == null || scheduler.isShutdown()) {
                releaseAll();
            } else {
                scheduler.schedule(this::releaseAll, AFTER_FAULT.toMillis(), TimeUnit.MILLISECONDS);
            }
        }

        private void releaseAll() {
            if (streams.ordered(shipment)) {
                // First in line for their stream again, before anything newer of it.
                nextTurn.accept(streams.settled(OrderedStreams.streamOf(shipment.first().request()), shipment.entries()));
                return;
            }
            budget.give(shipment.bytes());
            shipment.entries().forEach(entry -> spool.release(entry.seq()));
        }
    }
}
