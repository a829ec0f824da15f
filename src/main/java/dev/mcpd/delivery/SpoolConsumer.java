package dev.mcpd.delivery;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamWindow;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongToIntFunction;
import org.apache.camel.Endpoint;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePattern;
import org.apache.camel.Processor;
import org.apache.camel.support.DefaultConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ships the spool: {@code workers} delivery lanes each take the oldest entry not yet out (waking as soon as one is
 * committed — no poll period) and deliver it in one straight line: choose the upstream and a place in its window
 * ({@link UpstreamChoice}), then pack for that upstream — with the entries waiting behind it, up to a batch's worth, in
 * relay batches of entries that share a credential when it takes them, in merged requests when it does not
 * ({@link ShipmentPacker}), one record per entry for a Kafka topic — then start each shipment through the route, which
 * makes the request, sends it, judges the answer and keeps what was refused. An entry of an ordered stream goes to its
 * stream ({@link OrderedStreams}), whose turns are delivered the same way. A lane is busy only until its shipment's
 * request is sent: the request crosses the link asynchronously and the lane takes the next entry. When the exchange
 * completes — whichever thread its answer came back on — each entry is removed from the spool (delivered, or kept in
 * dead/) or given back, as the exchange's {@link ShipmentOutcome} says (to the next upstream, alone or in halves next
 * time, the relay is stopping); when something failed that is not the upstream's answer, the entries are given back
 * after a pause. An entry is never out twice at once.
 */
public final class SpoolConsumer extends DefaultConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(SpoolConsumer.class);
    /** How long a lane waits for an entry before it checks whether it should stop. */
    private static final Duration TAKE_WAIT = Duration.ofMillis(250);
    private static final Duration AFTER_FAULT = ShipmentSettlement.AFTER_FAULT;
    /** How long a stop waits for requests in flight to be answered before it gives up on them. */
    private static final Duration STOP_WAIT = InternalTuning.DEFAULT.stopWait();
    /** How long a lane waits for more entries to fill a batch or merge while its upstream is busy. */
    static final Duration LINGER = Duration.ofMillis(5);

    private final Spool spool;
    private final int workers;
    private final DeliveryWorkers busy;
    private final DeliveryBudget budget;
    private final UpstreamBoard board;
    private final ShipmentPacker packer;
    /** What delivery remembers of each entry out and not finished. */
    private final EntryRecords records;
    private final UpstreamChoice chooser;
    /** What lanes took of ordered streams while a shipment of the same stream was out. */
    private final OrderedStreams streams;
    private final ShipmentSettlement settlement;
    private final AtomicInteger inFlight = new AtomicInteger();
    private ExecutorService lanes;
    /** Starts a stream's next shipment once its last is settled (the answer came on an event loop: it must not wait). */
    private ExecutorService streamTurns;
    private ScheduledExecutorService later;

    /** {@code workers} lanes run {@code processor} (the delivery route) for the entries of {@code spool}. */
    public SpoolConsumer(Endpoint endpoint, Processor processor, Spool spool, int workers, SpoolLanes lanes) {
        super(endpoint, processor);
        this.spool = spool;
        this.workers = workers;
        this.busy = lanes.workers();
        this.budget = lanes.budget();
        this.board = lanes.board();
        this.packer = lanes.packer();
        this.records = lanes.records();
        this.chooser = new UpstreamChoice(board, lanes.expiry(), records);
        this.streams = lanes.streams();
        this.settlement = new ShipmentSettlement(spool, budget, records, streams, this::startTurn);
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        var executors = getEndpoint().getCamelContext().getExecutorServiceManager();
        later = executors.newSingleThreadScheduledExecutor(this, "delivery-retry");
        settlement.retryOn(later);
        streamTurns = executors.newFixedThreadPool(this, "delivery-streams", workers);
        lanes = executors.newFixedThreadPool(this, "delivery", workers);
        streams.lanes(workers);
        busy.running(workers);
        for (int i = 0; i < workers; i++) {
            int lane = i;
            lanes.execute(() -> work(lane));
        }
    }

    private void work(int lane) {
        while (isRunAllowed() && !isSuspendingOrSuspended()) {
            try {
                Optional<SpoolEntry> first = take(lane, TAKE_WAIT);
                if (first.isEmpty()) {
                    streams.broughtNone(lane).forEach(this::deliverTurn);
                    continue;
                }
                busy.started();
                try {
                    deliver(lane, first.get());
                } finally {
                    busy.finished();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | RuntimeException e) {
                streams.broughtNone(lane).forEach(this::deliverTurn);
                LOG.error("delivery lane could not take the next entry: {}", e.toString());
                pause();
            }
        }
    }

    /**
     * The oldest entry not out, within the delivery budget: room for the entry's stored size is taken as the spool
     * hands it out, so reading it never passes the budget, and what its body does not need is given back. A lane
     * waiting for an entry holds no room; when there is none for the oldest entry, it stays the oldest until there is.
     */
    private Optional<SpoolEntry> take(int lane, Duration maxWait) throws InterruptedException, IOException {
        EntryRoom room = new EntryRoom(budget);
        Optional<SpoolEntry> entry = spool.next(maxWait, seq -> streams.handingOut(lane, seq), room);
        entry.ifPresent(room::keepBody);
        return entry;
    }

    /**
     * The lane's oldest entry, delivered: its ordered stream takes it, or the upstream is chosen (and a place in its
     * window), then the entry is packed for that upstream — alone, or with those waiting behind it in relay batches
     * or merged requests — and each shipment is sent.
     */
    private void deliver(int lane, SpoolEntry first) throws InterruptedException, IOException {
        if (streams.ordered(first.request())) {
            // Its stream's turn, or it waits for it (held by the streams, out of the spool).
            streams.took(lane, first).forEach(this::deliverTurn);
            return;
        }
        streams.broughtNone(lane).forEach(this::deliverTurn);
        UpstreamChoice.Choice choice = chooser.choose(List.of(first), false, this::stopping);
        if (choice instanceof UpstreamChoice.Decided decided) {
            startDecided(Shipment.single(first), decided.outcome());
            return;
        }
        UpstreamChoice.Chosen chosen = (UpstreamChoice.Chosen) choice;
        List<Shipment> shipments = packedFor(lane, chosen.upstream(), first);
        send(shipments.get(0), chosen.upstream(), chosen.slot());
        for (Shipment next : shipments.subList(1, shipments.size())) {
            Optional<UpstreamWindow.Slot> place = chooser.anotherPlace(chosen.upstream(), next, this::stopping);
            if (place.isPresent()) {
                send(next, chosen.upstream(), place.get());
            } else {
                settlement.giveBack(next.entries()); // first in line, packed again for the upstream that comes next
            }
        }
    }

    /**
     * The entry alone, or with those waiting behind it, packed for {@code upstream}: in relay batches when it takes
     * them, else — when the entry is an OTLP export request — in merged requests; a Kafka topic takes one record per
     * entry.
     */
    private List<Shipment> packedFor(int lane, Upstream upstream, SpoolEntry first)
            throws InterruptedException, IOException {
        if (upstream.isKafka() || !packer.batching() || records.sendAtMost(first.seq()) <= 1) {
            return List.of(Shipment.single(first));
        }
        boolean batches = board.offerOnceProbed(upstream, UpstreamProbe.FIRST_ANSWER_WAIT).batches();
        if (!batches && !packer.mergeable(first)) {
            return List.of(Shipment.single(first));
        }
        List<SpoolEntry> taken = new ArrayList<>(List.of(first));
        long bytes = first.request().body().length;
        long lingerUntil = 0;
        while (taken.size() < packer.maxEntries() && bytes < packer.maxBytes()) {
            Optional<SpoolEntry> next = takeUnordered(lane, Duration.ZERO);
            if (next.isEmpty()) {
                // Under load (other requests to it in flight already, beside the place this one holds), a moment's
                // wait fills the request: fewer, larger requests for the same entries. At rest nothing waits.
                if (lingerUntil == 0 && board.window(upstream).inFlight() > 1) {
                    lingerUntil = System.nanoTime() + LINGER.toNanos();
                }
                long left = lingerUntil - System.nanoTime();
                if (lingerUntil == 0 || left <= 0 || (next = takeUnordered(lane, Duration.ofNanos(left))).isEmpty()) {
                    break;
                }
            }
            taken.add(next.get());
            bytes += next.get().request().body().length;
        }
        return packed(upstream, batches, taken);
    }

    /** {@code taken} packed for an upstream that takes relay batches, or not; never a fault that strands them. */
    private List<Shipment> packed(Upstream upstream, boolean batches, List<SpoolEntry> taken) {
        if (taken.size() == 1 && !batches) {
            return List.of(Shipment.single(taken.get(0)));
        }
        LongToIntFunction limits = records::sendAtMost;
        try {
            return batches ? packer.pack(taken, limits) : packer.merge(taken, limits);
        } catch (RuntimeException e) {
            // What was taken goes one by one, as it was received.
            LOG.error("entries from seq={} could not be packed together for upstream={} ({}): they go one by one",
                    taken.get(0).seq(), upstream.label(), e.toString());
            return taken.stream().map(Shipment::single).toList();
        }
    }

    /**
     * The next entry waiting behind a batch's or merge's first, if it belongs to no ordered stream: one that does goes
     * to its stream instead (and its turn starts, if it came), and the next is taken.
     */
    private Optional<SpoolEntry> takeUnordered(int lane, Duration maxWait) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            Optional<SpoolEntry> next = take(lane, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (next.isPresent() && streams.ordered(next.get().request())) {
                streams.took(lane, next.get()).forEach(this::deliverTurn);
                continue;
            }
            streams.broughtNone(lane).forEach(this::deliverTurn);
            return next;
        }
    }

    /**
     * A stream's turn, delivered as any entries are — the upstream chosen, the entries packed for it — but only its
     * first shipment goes: the entries that cannot travel in it wait for the stream's next turn.
     */
    private void deliverTurn(List<SpoolEntry> turn) {
        if (turn.isEmpty()) {
            return;
        }
        UpstreamChoice.Choice choice;
        try {
            choice = chooser.choose(turn, true, this::stopping);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            choice = new UpstreamChoice.Decided(ShipmentOutcome.givenBack(Shipment.batchOf(turn)));
        }
        if (choice instanceof UpstreamChoice.Decided decided) {
            startDecided(turn.size() == 1 ? Shipment.single(turn.get(0)) : Shipment.batchOf(turn), decided.outcome());
            return;
        }
        UpstreamChoice.Chosen chosen = (UpstreamChoice.Chosen) choice;
        Upstream upstream = chosen.upstream();
        List<Shipment> packed = List.of(Shipment.single(turn.get(0)));
        if (turn.size() > 1 && !upstream.isKafka() && packer.batching()) {
            packed = packed(upstream, board.offer(upstream).batches(), turn);
        }
        Shipment first = packed.get(0);
        List<SpoolEntry> later = turn.subList(first.size(), turn.size());
        if (!later.isEmpty()) {
            streams.notSent(later);
        }
        send(first, upstream, chosen.slot());
    }

    /** A stream's turn came on a thread that must not wait: its shipment starts on one that may. */
    private void startTurn(List<SpoolEntry> turn) {
        if (turn.isEmpty()) {
            return;
        }
        ExecutorService turns = streamTurns;
        try {
            if (turns == null || turns.isShutdown() || !isRunAllowed()) {
                throw new RejectedExecutionException("stopping");
            }
            turns.execute(() -> deliverTurn(turn));
        } catch (RejectedExecutionException stopping) {
            settlement.giveBack(turn); // the relay is stopping: the next start sends them, in order
        }
    }

    /**
     * The shipment goes to {@code upstream}, holding {@code slot}: the request is made for it and sent, unless the
     * entry cannot be sent there at all (its target or method) — the entry's fault, not the upstream's: it goes to
     * dead/, and no upstream waits for it.
     */
    private void send(Shipment shipment, Upstream upstream, UpstreamWindow.Slot slot) {
        String target = shipment.batch() ? RelayBatch.PATH : shipment.first().request().target();
        String at;
        try {
            at = upstream.isKafka() ? target : upstream.targetFor(target); // a record's header says its target
        } catch (RequestTarget.InvalidTarget e) {
            slot.unused();
            startDecided(shipment, ShipmentOutcome.deadLettered(shipment.first(),
                    PermanentRefusal.unsendable(upstream.label(), e.getMessage())));
            return;
        }
        Optional<PermanentRefusal> unsendable = upstream.isKafka() || shipment.size() > 1 ? Optional.empty()
                : UpstreamRequest.unsendable(shipment.first().request(), upstream.label());
        if (unsendable.isPresent()) {
            slot.unused();
            startDecided(shipment, ShipmentOutcome.deadLettered(shipment.first(), unsendable.get()));
            return;
        }
        shipment.entries().forEach(entry -> records.packed(entry.seq()));
        records.sending(shipment);
        board.sending(upstream);
        start(shipment, exchange -> DeliveryExchange.setDestination(exchange, upstream, at, slot));
    }

    /** An exchange for entries whose outcome was decided without a request: the steps after the sender see it. */
    private void startDecided(Shipment shipment, ShipmentOutcome outcome) {
        start(shipment, exchange -> DeliveryExchange.setOutcome(exchange, outcome));
    }

    private boolean stopping() {
        return !isRunAllowed() || getEndpoint().getCamelContext().isStopping();
    }

    private void start(Shipment shipment, Consumer<Exchange> where) {
        Exchange exchange = createExchange(false);
        exchange.setPattern(ExchangePattern.InOnly);
        DeliveryExchange.setShipment(exchange, shipment);
        where.accept(exchange);
        exchange.getExchangeExtension().addOnCompletion(settlement.of(shipment));
        inFlight.incrementAndGet();
        // The callback only counts: what happens to the entries is decided when the exchange completes.
        getAsyncProcessor().process(exchange, doneSync -> {
            if (inFlight.decrementAndGet() == 0) {
                synchronized (inFlight) {
                    inFlight.notifyAll();
                }
            }
        });
    }

    private void pause() {
        try {
            Thread.sleep(AFTER_FAULT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    protected void doStop() throws Exception {
        var executors = getEndpoint().getCamelContext().getExecutorServiceManager();
        if (lanes != null) {
            // Lanes see isRunAllowed() turn false and start no new entry; entries waiting for an upstream or a place
            // in its window give up (DeliveryStopped) and stay in the spool.
            lanes.shutdown();
            if (!lanes.awaitTermination(STOP_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                lanes.shutdownNow();
            }
            executors.shutdown(lanes);
            lanes = null;
        }
        // Requests already sent get their answers, so what an upstream took is not sent again after a restart.
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        synchronized (inFlight) {
            for (long left = STOP_WAIT.toMillis(); inFlight.get() > 0 && left > 0;
                 left = (deadline - System.nanoTime()) / 1_000_000) {
                inFlight.wait(left);
            }
        }
        if (inFlight.get() > 0) {
            LOG.warn("stopping with {} deliveries unanswered: they stay in the spool and are sent again", inFlight.get());
        }
        if (streamTurns != null) {
            executors.shutdown(streamTurns);
            streamTurns = null;
        }
        settlement.giveBack(streams.drain()); // what waited for its stream's turn: the next start sends it, in order
        if (later != null) {
            settlement.retryOn(null);
            executors.shutdown(later);
            later = null;
        }
        super.doStop();
    }
}
