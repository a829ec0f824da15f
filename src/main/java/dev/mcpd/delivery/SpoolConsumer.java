package dev.mcpd.delivery;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.DeliveryStopped;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongToIntFunction;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePattern;
import org.apache.camel.Processor;
import org.apache.camel.support.DefaultConsumer;
import org.apache.camel.support.SynchronizationAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ships the spool: {@code workers} delivery lanes each take the oldest entry not yet out (waking as soon as one is
 * committed — no poll period) and start it through the route. When the first upstream that is not waiting takes relay
 * batches, the lane takes the entries waiting behind it too, up to a batch's worth, and packs them into batches of
 * entries that share a credential ({@link ShipmentPacker}). A lane is busy only until its shipment's request is sent:
 * the route waits for an upstream and a place in its window on the lane, then the request crosses the link
 * asynchronously and the lane takes the next entry. When the exchange completes — whichever thread its answer came
 * back on — each entry is removed from the spool (delivered, or kept in dead/) or given back, as the exchange's
 * {@link ShipmentOutcome} says (retried elsewhere, sent alone or in halves next time, the relay is stopping); when
 * something failed that is not the upstream's answer, the entries are given back after a pause. An entry is never out
 * twice at once.
 */
final class SpoolConsumer extends DefaultConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(SpoolConsumer.class);
    /** How long a lane waits for an entry before it checks whether it should stop. */
    private static final Duration TAKE_WAIT = Duration.ofMillis(250);
    /** An entry that failed unexpectedly goes out again only after this, so a broken entry cannot spin. */
    private static final Duration AFTER_FAULT = Duration.ofSeconds(1);
    /** How long a stop waits for requests in flight to be answered before it gives up on them. */
    private static final Duration STOP_WAIT = InternalTuning.DEFAULT.stopWait();
    /** How long a lane waits for more entries to fill a batch or merge while its upstream is busy. */
    static final Duration LINGER = Duration.ofMillis(5);

    private final Spool spool;
    private final int workers;
    private final DeliveryWorkers busy;
    private final DeliveryBudget budget;
    private final long maxBodyBytes;
    private final UpstreamBoard board;
    private final ShipmentPacker packer;
    private final EntryAttempts attempts;
    /** What lanes took of ordered streams while a shipment of the same stream was out. */
    private final OrderedStreams streams;
    /**
     * Entries whose batch or merge could not go as one, and how many entries the request that carries each may hold
     * next time (1: alone). Taken out when they are packed.
     */
    private final Map<Long, Integer> atMost = new ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private ExecutorService lanes;
    /** Starts a stream's next shipment once its last is settled (the answer came on an event loop: it must not wait). */
    private ExecutorService streamTurns;
    private ScheduledExecutorService later;

    SpoolConsumer(SpoolEndpoint endpoint, Processor processor, Spool spool, int workers, SpoolComponent.Lanes lanes) {
        super(endpoint, processor);
        this.spool = spool;
        this.workers = workers;
        this.busy = lanes.workers();
        this.budget = lanes.budget();
        this.maxBodyBytes = lanes.maxBodyBytes();
        this.board = lanes.board();
        this.packer = lanes.packer();
        this.attempts = lanes.attempts();
        this.streams = lanes.streams();
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        var executors = getEndpoint().getCamelContext().getExecutorServiceManager();
        later = executors.newSingleThreadScheduledExecutor(this, "delivery-retry");
        streamTurns = executors.newFixedThreadPool(this, "delivery-streams", workers);
        lanes = executors.newFixedThreadPool(this, "delivery", workers);
        streams.lanes(workers);
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
                    streams.broughtNone(lane).forEach(this::startStream);
                    continue;
                }
                busy.started();
                try {
                    for (Shipment shipment : shipmentsFrom(lane, first.get())) {
                        start(shipment);
                    }
                } finally {
                    busy.finished();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | RuntimeException e) {
                streams.broughtNone(lane).forEach(this::startStream);
                LOG.error("delivery lane could not take the next entry: {}", e.toString());
                pause();
            }
        }
    }

    /**
     * The oldest entry not out, within the delivery budget: room for the largest entry is taken first, so reading it
     * never passes the budget, and what the entry does not need is given back.
     */
    private Optional<SpoolEntry> take(int lane, Duration maxWait) throws InterruptedException, IOException {
        if (!budget.take(maxBodyBytes, maxWait)) {
            return Optional.empty();
        }
        Optional<SpoolEntry> entry;
        try {
            entry = spool.next(maxWait, seq -> streams.handingOut(lane, seq));
        } catch (IOException | RuntimeException e) {
            budget.give(maxBodyBytes);
            throw e;
        }
        budget.give(maxBodyBytes - entry.map(e -> (long) e.request().body().length).orElse(0L));
        return entry;
    }

    /**
     * The entry alone, or with those waiting behind it, packed: in relay batches when the first ready upstream takes
     * them, else — when the entry is an OTLP export request — in merged requests.
     */
    private List<Shipment> shipmentsFrom(int lane, SpoolEntry first) throws InterruptedException, IOException {
        if (streams.ordered(first.request())) {
            // Its stream's turn, or it waits for it (held by the streams, out of the spool).
            return streamShipments(streams.took(lane, first));
        }
        streams.broughtNone(lane).forEach(this::startStream);
        Optional<Upstream> ready = board.firstReady();
        boolean batches = packer.batching() && ready.isPresent() && !ready.get().isKafka()
                && board.offerOnceProbed(ready.get(), UpstreamProbe.FIRST_ANSWER_WAIT).batches();
        boolean merges = ready.isPresent() && !batches && !ready.get().isKafka() && packer.mergeable(first);
        if (!batches && !merges || atMost.getOrDefault(first.seq(), Integer.MAX_VALUE) <= 1) {
            atMost.remove(first.seq());
            return List.of(Shipment.single(first));
        }
        List<SpoolEntry> taken = new ArrayList<>(List.of(first));
        long bytes = first.request().body().length;
        long lingerUntil = 0;
        while (taken.size() < packer.maxEntries() && bytes < packer.maxBytes()) {
            Optional<SpoolEntry> next = takeUnordered(lane, Duration.ZERO);
            if (next.isEmpty()) {
                // Under load (requests to it in flight already), a moment's wait fills the request: fewer, larger
                // requests for the same entries. At rest nothing waits.
                if (lingerUntil == 0 && board.window(ready.get()).inFlight() > 0) {
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
        LongToIntFunction limits = seq -> atMost.getOrDefault(seq, Integer.MAX_VALUE);
        List<Shipment> shipments;
        try {
            shipments = batches ? packer.pack(taken, limits) : packer.merge(taken, limits);
        } catch (RuntimeException e) {
            // Never an entry stranded by a packing fault: what was taken goes one by one, as it was received.
            LOG.error("entries from seq={} could not be packed together ({}): they go one by one", first.seq(),
                    e.toString());
            shipments = taken.stream().map(Shipment::single).toList();
        }
        taken.forEach(entry -> atMost.remove(entry.seq()));
        return shipments;
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
                streamShipments(streams.took(lane, next.get())).forEach(this::start);
                continue;
            }
            streams.broughtNone(lane).forEach(this::startStream);
            return next;
        }
    }

    private void startStream(List<SpoolEntry> turn) {
        streamShipment(turn).forEach(this::start);
    }

    private List<Shipment> streamShipments(List<List<SpoolEntry>> turns) {
        List<Shipment> shipments = new ArrayList<>();
        turns.forEach(turn -> shipments.addAll(streamShipment(turn)));
        return shipments;
    }

    /**
     * The next shipment of a stream, of the entries it may carry (oldest first): batched or merged as any entries
     * would be for the first ready upstream; those that cannot travel in it wait for the stream's next turn.
     */
    private List<Shipment> streamShipment(List<SpoolEntry> turn) {
        if (turn.isEmpty()) {
            return List.of();
        }
        Optional<Upstream> ready = board.firstReady();
        LongToIntFunction limits = seq -> atMost.getOrDefault(seq, Integer.MAX_VALUE);
        List<Shipment> packed = List.of(Shipment.single(turn.get(0)));
        try {
            if (turn.size() > 1 && ready.isPresent() && !ready.get().isKafka()) {
                packed = packer.batching() && board.offer(ready.get()).batches() ? packer.pack(turn, limits)
                        : packer.merge(turn, limits);
            }
        } catch (RuntimeException e) {
            // Never a stream held up by a packing fault: its oldest entry goes alone, as it was received.
            LOG.error("entries of an ordered stream from seq={} could not be packed together ({}): they go one by"
                    + " one", turn.get(0).seq(), e.toString());
        }
        Shipment first = packed.get(0);
        first.entries().forEach(entry -> atMost.remove(entry.seq()));
        List<SpoolEntry> later = turn.subList(first.size(), turn.size());
        if (!later.isEmpty()) {
            streams.notSent(later);
        }
        return List.of(first);
    }

    /** A stream's turn came on a thread that must not wait: its shipment starts on one that may. */
    private void startTurn(List<SpoolEntry> turn) {
        if (turn.isEmpty()) {
            return;
        }
        ExecutorService turns = streamTurns;
        try {
            if (turns == null || turns.isShutdown() || !isRunAllowed()) {
                throw new java.util.concurrent.RejectedExecutionException("stopping");
            }
            turns.execute(() -> startStream(turn));
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            giveBackToSpool(turn); // the relay is stopping: the next start sends them, in order
        }
    }

    private void giveBackToSpool(List<SpoolEntry> entries) {
        for (SpoolEntry entry : entries) {
            budget.give(entry.request().body().length);
            spool.release(entry.seq());
        }
    }

    private void start(Shipment shipment) {
        Exchange exchange = createExchange(false);
        exchange.setPattern(ExchangePattern.InOnly);
        DeliveryExchange.setShipment(exchange, shipment);
        exchange.getExchangeExtension().addOnCompletion(new ShipmentCompletion(shipment));
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

    /**
     * Once a shipment's exchange has completed: each entry delivered or kept in dead/ leaves the spool; each given
     * back returns to it, first in line, with the most entries the request that carries it next may hold.
     */
    private final class ShipmentCompletion extends SynchronizationAdapter {
        private final Shipment shipment;

        ShipmentCompletion(Shipment shipment) {
            this.shipment = shipment;
        }

        @Override
        public void onComplete(Exchange exchange) {
            Optional<ShipmentOutcome> outcome = DeliveryExchange.outcome(exchange);
            if (outcome.isEmpty()) {
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
                    if (back.sendAtMost() != ShipmentOutcome.AS_PACKED) {
                        atMost.put(seq, back.sendAtMost());
                    }
                    spool.release(seq);
                    continue;
                }
                attempts.finished(seq);
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
                    if (back.sendAtMost() != ShipmentOutcome.AS_PACKED) {
                        atMost.put(entry.seq(), back.sendAtMost());
                    }
                    givenBack.add(entry);
                    continue;
                }
                budget.give(entry.request().body().length);
                attempts.finished(entry.seq());
                finished[count++] = entry.seq();
            }
            String stream = OrderedStreams.streamOf(shipment.first().request());
            if (count == 0) {
                startTurn(streams.settled(stream, givenBack));
                return;
            }
            leaveTheSpool(finished, count);
            whenDurable(stream, givenBack);
        }

        /** Once the spool's record of what left is on disk, the stream's next turn; until then it waits. */
        private void whenDurable(String stream, List<SpoolEntry> givenBack) {
            spool.doneDurably().whenComplete((durable, failure) -> {
                if (failure == null) {
                    startTurn(streams.settled(stream, givenBack));
                    return;
                }
                LOG.error("the record of deliveries of an ordered stream could not be forced ({}): its next entries"
                        + " wait, and it is tried again in {} s", failure.getMessage(), AFTER_FAULT.toSeconds());
                ScheduledExecutorService scheduler = later;
                if (scheduler != null && !scheduler.isShutdown()) {
                    scheduler.schedule(() -> whenDurable(stream, givenBack), AFTER_FAULT.toMillis(),
                            TimeUnit.MILLISECONDS);
                } else {
                    giveBackToSpool(streams.settled(stream, givenBack));
                }
            });
        }

        /** Something failed that is not the upstream's answer: the entries go out again after a pause. */
        private void afterFault(String what) {
            LOG.error("delivery of seq={}{} failed and it stays in the spool: {}", shipment.first().seq(),
                    shipment.size() > 1 ? " and " + (shipment.size() - 1) + " more" : "", what);
            ScheduledExecutorService scheduler = later;
            if (scheduler == null || scheduler.isShutdown()) {
                releaseAll();
            } else {
                scheduler.schedule(this::releaseAll, AFTER_FAULT.toMillis(), TimeUnit.MILLISECONDS);
            }
        }

        private void releaseAll() {
            if (streams.ordered(shipment)) {
                // First in line for their stream again, before anything newer of it.
                startTurn(streams.settled(OrderedStreams.streamOf(shipment.first().request()), shipment.entries()));
                return;
            }
            budget.give(shipment.bytes());
            shipment.entries().forEach(entry -> spool.release(entry.seq()));
        }
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
        giveBackToSpool(streams.drain()); // what waited for its stream's turn: the next start sends it, in order
        if (later != null) {
            executors.shutdown(later);
            later = null;
        }
        super.doStop();
    }
}
