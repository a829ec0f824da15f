package dev.mcpd.delivery;

import dev.mcpd.upstream.DeliveryStopped;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamWindow;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.camel.AsyncCallback;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Exchange;
import org.apache.camel.processor.loadbalancer.LoadBalancerSupport;

/**
 * Ordered failover across upstreams with per-upstream waits and windows, as a Camel custom load balancer: it chooses,
 * acquires and sends. Its children are the senders (HTTP, Kafka); the state that Camel's own failover load balancer
 * lacks — which upstream waits, until when, how many requests it may have in flight — lives in the
 * {@link UpstreamBoard}.
 *
 * <p>An attempt goes to the first upstream that is not waiting, once that upstream's window has a place: the delivery
 * lane that carries the entry waits for both, and then the request goes out asynchronously — the lane is free for the
 * next entry while this one crosses the link. What the answer means, for the upstream and for each entry, the
 * {@link DeliveryOutcome} decides; the exchange then carries a {@link ShipmentOutcome} and goes on. An entry given
 * back after a retryable failure is first in line in the spool, and the next lane sends it to the next upstream at
 * once (this load balancer remembers which upstreams it failed on). Outcomes decided before anything is sent — the
 * entry waited past {@code --spool-max-age}, its target cannot be sent, the upstream takes no such request, the relay
 * is stopping — end the exchange the same way, without a request.
 */
public final class UpstreamFailover extends LoadBalancerSupport {

    private static final Duration STOP_CHECK = Duration.ofMillis(250);
    /**
     * The upstreams each entry has failed on, while it moves between them. Entries out or given back are few (lanes
     * plus windows); the bound only guards against a leak, and forgetting costs at most one extra attempt.
     */
    private static final int MAX_REMEMBERED = 100_000;

    private final UpstreamBoard board;
    private final DeliveryOutcome outcomes;
    private final Map<Long, Set<Integer>> triedBySeq = new ConcurrentHashMap<>();
    private final SpoolExpiry expiry;
    private final OldestFirst oldestFirst;
    private final OrderedStreams streams;

    public UpstreamFailover(UpstreamBoard board, DeliveryOutcome outcomes, SpoolExpiry expiry,
                            OldestFirst oldestFirst, OrderedStreams streams) {
        this.board = board;
        this.outcomes = outcomes;
        this.expiry = expiry;
        this.oldestFirst = oldestFirst;
        this.streams = streams;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        Shipment shipment = DeliveryExchange.shipment(exchange);
        if (DeliveryExchange.outcome(exchange).isPresent()) {
            callback.done(true); // decided before the attempt: its request could not be made
            return true;
        }
        long seq = shipment.first().seq();
        String target = shipment.batch() ? RelayBatch.PATH : shipment.first().request().target();
        Set<Integer> tried = triedBySeq.computeIfAbsent(seq, unused -> ConcurrentHashMap.newKeySet());
        if (triedBySeq.size() > MAX_REMEMBERED) {
            triedBySeq.clear();
        }
        Upstream upstream;
        UpstreamWindow.Slot slot;
        try {
            while (true) {
                upstream = board.awaitReady(tried, () -> stopping(exchange) || expiry.anyExpired(shipment),
                        STOP_CHECK);
                if (mustGoAlone(shipment, upstream)) {
                    return finish(exchange, ShipmentOutcome.givenBack(shipment, 1), callback);
                }
                Optional<UpstreamWindow.Slot> place = board.window(upstream).acquire();
                if (place.isPresent() && oldestFirst.mustWait(shipment)) {
                    // An older entry failed and waits to be tried again: it goes first, this one behind it.
                    place.get().unused();
                    return finish(exchange, ShipmentOutcome.givenBack(shipment), callback);
                }
                if (place.isPresent()) {
                    slot = place.get();
                    break;
                }
                if (stopping(exchange)) {
                    throw new DeliveryStopped();
                }
            }
        } catch (DeliveryStopped e) {
            if (!stopping(exchange) && expiry.anyExpired(shipment)) {
                // Waited for an upstream past --spool-max-age: a lone entry goes to dead/ as expired; those of a batch
                // or merge go back to the spool, where the expiry sweep (or a lane, once an upstream is ready) takes
                // them.
                triedBySeq.remove(seq);
                // (an ordered stream's go alone: its entries are held by the stream, where no expiry sweep sees them)
                return finish(exchange, shipment.size() > 1 ? ShipmentOutcome.givenBack(shipment,
                        streams.ordered(shipment) ? 1 : ShipmentOutcome.AS_PACKED)
                        : ShipmentOutcome.deadLettered(shipment.first(), expiry.refusal(shipment.first())), callback);
            }
            return finish(exchange, ShipmentOutcome.givenBack(shipment), callback);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return finish(exchange, ShipmentOutcome.givenBack(shipment), callback);
        }
        String at;
        try {
            at = upstream.isKafka() ? target : upstream.targetFor(target); // a record's header says its target
        } catch (RequestTarget.InvalidTarget e) {
            // The entry's fault, not the upstream's: it goes to dead/, and no upstream waits for it.
            slot.unused();
            triedBySeq.remove(seq);
            return finish(exchange, ShipmentOutcome.deadLettered(shipment.first(),
                    PermanentRefusal.unsendable(upstream.label(), e.getMessage())), callback);
        }
        DeliveryExchange.setDestination(exchange, upstream, at);
        oldestFirst.sending(shipment);
        board.sending(upstream);
        long started = System.nanoTime();
        Upstream chosen = upstream;
        UpstreamWindow.Slot place = slot;
        return sender(chosen).process(exchange, doneSync -> {
            try {
                ShipmentOutcome outcome = answered(exchange, chosen, place, Duration.ofNanos(System.nanoTime()
                        - started));
                if (outcome.upstreamFailed()) {
                    tried.add(chosen.order());
                } else {
                    triedBySeq.remove(seq);
                }
                DeliveryExchange.setOutcome(exchange, outcome);
            } catch (RuntimeException e) {
                place.unused();
                exchange.setException(e);
            }
            callback.done(doneSync);
        });
    }

    /**
     * Whether the shipment's entries must go to {@code upstream} one by one: a Kafka topic takes one record per
     * entry, a relay batch needs an upstream that takes them, and an mcpd collector keeps every entry's own key — the
     * entries go to it alone, or batched, never merged.
     */
    private boolean mustGoAlone(Shipment shipment, Upstream upstream) {
        if (shipment.size() > 1 && upstream.isKafka()) {
            return true;
        }
        boolean batches = board.offer(upstream).batches();
        return shipment.batch() && !batches || shipment.merge() && batches;
    }

    /** The answer came: what it means, unless the relay is stopping and closed the client under it. */
    private ShipmentOutcome answered(Exchange exchange, Upstream upstream, UpstreamWindow.Slot slot,
                                     Duration latency) {
        Shipment shipment = DeliveryExchange.shipment(exchange);
        UpstreamAnswer answer = DeliveryExchange.answer(exchange);
        if (answer.failure() != null && stopping(exchange)) {
            slot.unused();
            return ShipmentOutcome.givenBack(shipment); // a client closed under it says nothing about the entry
        }
        return outcomes.answered(shipment, upstream, slot, answer, latency);
    }

    /**
     * The child that carries an attempt to {@code upstream}: the load balancer's first for HTTP upstreams, its second
     * for Kafka topics (deliver.camel.yaml lists them in that order). Chosen here, with the upstream, rather than by
     * a choice in the route, which would cost every delivery an expression.
     */
    private AsyncProcessor sender(Upstream upstream) {
        List<AsyncProcessor> senders = getProcessors();
        if (upstream.isKafka() && senders.size() < 2) {
            throw new IllegalStateException("the delivery route names no sender for Kafka upstreams");
        }
        return senders.get(upstream.isKafka() ? 1 : 0);
    }

    private boolean stopping(Exchange exchange) {
        return !isRunAllowed() || exchange.getContext().isStopping();
    }

    private static boolean finish(Exchange exchange, ShipmentOutcome outcome, AsyncCallback callback) {
        DeliveryExchange.setOutcome(exchange, outcome);
        callback.done(true);
        return true;
    }

    @Override
    protected void doStop() throws Exception {
        board.close();
        super.doStop();
    }
}
