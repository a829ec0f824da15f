package dev.mcpd.delivery;

import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.logs.SenderText;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.BatchAnswer;
import dev.mcpd.upstream.RetryAfter;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamWindow;
import dev.mcpd.wire.Otlp;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.Route;
import org.apache.camel.StatefulService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the answer to one attempt means — the one place that decides it, for a lone entry, a relay batch and a merged
 * OTLP request alike. It reads the answer ({@link AnswerPolicy}), settles the place the request held in the
 * upstream's window, books the upstream's state on the board (delivered, refused for good, or failed: it waits), and
 * gives each entry its fate ({@link ShipmentOutcome}): delivered; kept in dead/ (a permanent refusal of the request,
 * or — in a relay batch — of that entry alone); or given back to the spool (the upstream failed the request
 * retryably; a batch's entry answered retryably for itself; a batch or merge refused as a whole, whose entries then
 * travel alone or in halves). A sender waiting for a delivered entry learns its answer here; one waiting for a
 * refused entry learns it once the dead letter is durable. An OTLP 200 that reports rejected items is a delivery —
 * the OTLP specification forbids retrying it — and the rejected items are counted ({@link RejectedItems}) and logged.
 * As a step of the delivery route it judges the answer the sender put on the exchange; an exchange whose outcome was
 * decided without a request passes.
 */
public final class DeliveryOutcome implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.outcomes");
    /** The lines of failover keep the logger they always had: operators filter on it. */
    private static final Logger FAILOVER = LoggerFactory.getLogger("dev.mcpd.delivery.UpstreamFailover");

    /** Per relay, not per process: a window of its own for each relay a JVM runs. */
    private final RateLimitedLog partialSuccesses = new RateLimitedLog(LOG, Duration.ofSeconds(10));
    private final RateLimitedLog splits = new RateLimitedLog(FAILOVER, Duration.ofSeconds(10));

    private final UpstreamBoard board;
    private final AnswerPolicy policy;
    private final EntryFates fates;
    private final RejectedItems rejectedItems;
    private final EntryRecords records;
    private final InstantSource clock;

    public DeliveryOutcome(UpstreamBoard board, AnswerPolicy policy, EntryFates fates, RejectedItems rejectedItems,
                           EntryRecords records, InstantSource clock) {
        this.board = board;
        this.policy = policy;
        this.fates = fates;
        this.rejectedItems = rejectedItems;
        this.records = records;
        this.clock = clock;
    }

    /** The answer the sender put on the exchange, judged: the exchange's outcome. */
    @Override
    public void process(Exchange exchange) {
        if (DeliveryExchange.outcome(exchange).isPresent()) {
            return; // decided before anything was sent
        }
        Shipment shipment = DeliveryExchange.shipment(exchange);
        UpstreamWindow.Slot slot = DeliveryExchange.slot(exchange).orElseThrow();
        UpstreamAnswer answer = DeliveryExchange.answer(exchange);
        if (answer == null) {
            throw new IllegalStateException("the sender put no answer on the exchange");
        }
        ShipmentOutcome outcome;
        if (answer.failure() != null && stopping(exchange)) {
            slot.unused();
            outcome = ShipmentOutcome.givenBack(shipment); // a client closed under it says nothing about the entry
        } else {
            outcome = answered(shipment, DeliveryExchange.upstream(exchange), slot, answer,
                    Duration.ofNanos(System.nanoTime() - DeliveryExchange.sentAtNanos(exchange)));
        }
        if (!outcome.upstreamFailed()) {
            records.movedOn(shipment.first().seq());
        }
        DeliveryExchange.setOutcome(exchange, outcome);
    }

    /** The relay is stopping, or its delivery route: clients may be closed under requests in flight. */
    private static boolean stopping(Exchange exchange) {
        if (exchange.getContext().isStopping() || exchange.getContext().isStopped()) {
            return true;
        }
        Route route = exchange.getContext().getRoute(exchange.getFromRouteId());
        return route == null || route.getConsumer() instanceof StatefulService consumer && !consumer.isRunAllowed();
    }

    /** The outcome of sending {@code shipment} to {@code upstream}, which answered {@code answer}. */
    ShipmentOutcome answered(Shipment shipment, Upstream upstream, UpstreamWindow.Slot slot, UpstreamAnswer answer,
                             Duration latency) {
        Attempt attempt = policy.judge(upstream, answer, latency, clock.instant());
        if (attempt.kind() == Attempt.Kind.UNSENDABLE) {
            // The entries' fault, not the upstream's: no upstream waits for them.
            slot.unused();
            if (shipment.size() > 1) {
                return ShipmentOutcome.givenBack(shipment, 1); // each entry gets its own verdict
            }
            return ShipmentOutcome.deadLettered(shipment.first(),
                    PermanentRefusal.unsendable(upstream.label(), attempt.cause()));
        }
        Optional<BatchAnswer> batchAnswer = Optional.empty();
        if (shipment.batch() && attempt.kind() == Attempt.Kind.DELIVERED) {
            batchAnswer = BatchAnswer.parse(attempt.answer(), shipment.size());
            if (batchAnswer.isEmpty()) {
                // It took the request but its answer says nothing of the entries: send them again (their keys make
                // any copy it kept harmless), elsewhere while it waits.
                attempt = attempt.retryable("a 2xx to the batch without an answer for each entry");
            }
        }
        if (attempt.kind() == Attempt.Kind.RETRYABLE) {
            // Before its place is freed: no lane holding a newer entry may take the place and go first.
            records.failedOn(shipment.entries(), upstream.order());
            if (attempt.overloaded()) {
                slot.dropped();
            } else {
                slot.unused(); // down or broken, not overloaded: its wait deals with that, its window stays
            }
            failed(attempt, shipment.size());
            recordFailure(shipment.entries(), upstream, attempt.cause());
            return ShipmentOutcome.retryElsewhere(shipment, upstream);
        }
        slot.answered();
        if (batchAnswer.isPresent()) {
            return eachOfTheBatch(shipment, attempt, batchAnswer.get(), answer.retryAfter());
        }
        if (attempt.kind() == Attempt.Kind.PERMANENT) {
            return refused(shipment, attempt);
        }
        board.delivered(upstream, attempt.status().getAsInt(), latency, shipment.size());
        // One entry, or a merge: a sender that waits for its entry gets the answer to the request that carried it.
        String type = attempt.contentType() == null ? "" : attempt.contentType();
        List<ShipmentOutcome.Fate> delivered = new ArrayList<>(shipment.size());
        for (SpoolEntry entry : shipment.entries()) {
            delivered.add(new ShipmentOutcome.Delivered(entry, attempt.status().getAsInt(), attempt.answer()));
            fates.delivered(entry.seq(), attempt.status().getAsInt(), type, attempt.answer());
        }
        Optional<PartialSuccess> partial = PartialSuccess.of(attempt.contentType(), attempt.answer());
        if (partial.isPresent()) {
            rejected(shipment, attempt, partial.get());
        }
        return new ShipmentOutcome(Optional.of(upstream), delivered, false);
    }

    /**
     * A permanent refusal of the request: a lone entry goes to dead/; a batch's or merge's entries are given back to
     * travel alone or in halves until each gets its own answer — none is dead-lettered for the others.
     */
    private ShipmentOutcome refused(Shipment shipment, Attempt attempt) {
        Upstream upstream = attempt.upstream();
        if (shipment.size() == 1 && !shipment.batch()) {
            board.refusedPermanently(upstream, attempt.status(), attempt.latency(), 1);
            PermanentRefusal why = attempt.status().isPresent() ? PermanentRefusal.refusedBy(attempt)
                    : PermanentRefusal.refusedByBroker(upstream.label(), attempt.cause());
            return new ShipmentOutcome(Optional.of(upstream),
                    List.of(new ShipmentOutcome.DeadLettered(shipment.first(), why)), false);
        }
        board.refusedPermanently(upstream, attempt.status(), attempt.latency(), 0);
        String what = shipment.batch() ? "a batch" : "a merge";
        recordFailure(shipment.entries(), upstream, attempt.cause() + " to " + what + " of " + shipment.size());
        if (shipment.batch()) {
            // The request as a whole was refused (its framing, its size, its key): each entry goes alone.
            return ShipmentOutcome.givenBack(shipment, 1);
        }
        return splitOrAlone(upstream, shipment, attempt.status().orElse(0));
    }

    /**
     * A merged request refused for good: which of its entries is refused, it does not say. A refused credential
     * concerns them all, so each goes alone at once; any other refusal splits the merge in halves, tried apart, until
     * the refused entries travel alone and get their own answers.
     */
    private ShipmentOutcome splitOrAlone(Upstream upstream, Shipment shipment, int status) {
        String refusedBy = "upstream=" + upstream.label() + " order=" + upstream.order()
                + " refused a merged request of " + shipment.size() + " entries with " + status;
        if (status == 401 || status == 403 || status == 407) {
            splits.warn("merge-credential", refusedBy + ": each goes alone");
            return ShipmentOutcome.givenBack(shipment, 1);
        }
        splits.warn("merge-split", refusedBy + ": its halves are tried apart until the refused entries travel alone");
        return ShipmentOutcome.givenBack(shipment, Math.max(1, shipment.size() / 2));
    }

    /**
     * Each entry of a relay batch the upstream took, by its own status: archived, refused for good (to dead/), or
     * answered retryably (a store that is busy says 503 for each) — those make the upstream wait, as the same answer
     * to a single entry does: otherwise they would come straight back to it, batch after batch, and never reach the
     * next upstream.
     */
    private ShipmentOutcome eachOfTheBatch(Shipment shipment, Attempt attempt, BatchAnswer batch, String retryAfter) {
        Upstream upstream = attempt.upstream();
        List<ShipmentOutcome.Fate> each = new ArrayList<>(shipment.size());
        int archived = 0;
        int refused = 0;
        int retryable = 0;
        int retryableStatus = 0;
        for (int i = 0; i < shipment.size(); i++) {
            SpoolEntry entry = shipment.entries().get(i);
            BatchAnswer.EntryOutcome outcome = batch.entries().get(i);
            switch (policy.classify(outcome.status())) {
                case DELIVERED -> {
                    archived++;
                    each.add(new ShipmentOutcome.Delivered(entry, 200, attempt.answer()));
                    reportDeliveredInBatch(entry, outcome);
                }
                case PERMANENT, UNSENDABLE -> {
                    refused++;
                    each.add(new ShipmentOutcome.DeadLettered(entry,
                            PermanentRefusal.refusedInBatch(upstream, outcome.status(), outcome.reason())));
                }
                case RETRYABLE -> {
                    retryable++;
                    retryableStatus = retryableStatus == 0 ? outcome.status() : retryableStatus;
                    each.add(new ShipmentOutcome.GivenBack(entry, ShipmentOutcome.AS_PACKED));
                    recordFailure(List.of(entry), upstream, outcome.status() + " for it in a batch");
                }
            }
        }
        int status = attempt.status().getAsInt();
        if (archived > 0) {
            board.delivered(upstream, status, attempt.latency(), archived);
        }
        if (refused > 0) {
            board.refusedPermanently(upstream, attempt.status(), attempt.latency(), refused);
        }
        if (retryable > 0) {
            board.failed(upstream, retryable + " of the batch's " + shipment.size() + " entries answered "
                    + retryableStatus, OptionalInt.of(retryableStatus), RetryAfter.parse(retryAfter, clock.instant()),
                    attempt.latency(), retryable);
            LOG.warn("upstream={} answered {} entries of a batch retryably: they go back to the spool",
                    upstream.label(), retryable);
        }
        return new ShipmentOutcome(Optional.of(upstream), each, false);
    }

    /**
     * The answer the collector would have given the entry sent alone: for OTLP its empty partial success, else the
     * entry's counts.
     */
    private void reportDeliveredInBatch(SpoolEntry entry, BatchAnswer.EntryOutcome outcome) {
        if (fates.awaited() == 0) {
            return; // nobody waits for any entry: nothing to build
        }
        String target = entry.request().target();
        String path = target.indexOf('?') < 0 ? target : target.substring(0, target.indexOf('?'));
        if (Otlp.isExportPath(path)) {
            String type = entry.request().contentType();
            fates.delivered(entry.seq(), outcome.status(), Otlp.answerContentType(type), Otlp.emptyAnswer(type));
        } else {
            fates.delivered(entry.seq(), outcome.status(), "application/json", outcome.counts());
        }
    }

    /** A retryable failure of the whole request: the upstream waits, and the entries go elsewhere. */
    private void failed(Attempt attempt, int entries) {
        board.failed(attempt.upstream(), attempt.cause(), attempt.status(), attempt.retryAfter(), attempt.latency(),
                entries);
        int status = attempt.status().orElse(0);
        if ((status == 401 || status == 403) && policy.relayPresentsOwnKey()) {
            FAILOVER.error("upstream={} refused the relay's own --upstream-key with {}: fix the key; requests stay in"
                    + " the spool and are retried", attempt.upstream().label(), status);
        }
    }

    /**
     * Counted per failed attempt only, off the success path: a delivery never records anything here (the spool
     * consumer's one removal per finished entry is all it costs).
     */
    private void recordFailure(List<SpoolEntry> entries, Upstream upstream, String what) {
        String line = "upstream=" + upstream.label() + " " + what;
        entries.forEach(entry -> records.failed(entry, line));
    }

    /** Items an upstream took the request for and rejected: counted by signal, logged at most every 10 s. */
    private void rejected(Shipment shipment, Attempt attempt, PartialSuccess partial) {
        Upstream upstream = attempt.upstream();
        Optional<OtlpMerge.Signal> signal = OtlpMerge.Signal.ofPath(shipment.first().request().target());
        signal.ifPresent(s -> rejectedItems.add(upstream, s, partial.rejected()));
        partialSuccesses.warn("partial-success", "upstream=" + upstream.label() + " order=" + upstream.order()
                + " signal=" + signal.map(OtlpMerge.Signal::label).orElse("none") + " rejected=" + partial.rejected()
                + " (a request of " + shipment.size() + (shipment.size() == 1 ? " entry" : " entries") + ", seq="
                + shipment.first().seq() + (shipment.size() == 1 ? "" : "…") + "): delivered, never sent again;"
                + " message=\"" + SenderText.quote(partial.message()) + "\""); // the upstream's text, escaped
    }
}
