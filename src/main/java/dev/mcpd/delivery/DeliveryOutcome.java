package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;

import dev.mcpd.upstream.BatchAnswer;

import dev.mcpd.spool.EntryFates;
import dev.mcpd.wire.Otlp;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.logs.SenderText;
import dev.mcpd.spool.SpoolEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the final attempt means for each entry of the shipment: delivered (a 2xx), refused for good (a permanent
 * status, for the request or — in a relay batch — for that entry alone: it goes to dead/), or, for an entry of a batch
 * the upstream answered retryably for itself, given back to the spool. The route then keeps the refused ones in dead/
 * and hands each delivered one to the operators' extension point; every entry of a merged OTLP request is delivered
 * with it. An OTLP 200 that reports rejected items is a delivery — the OTLP specification forbids retrying it — and
 * the rejected items are counted ({@link RejectedItems}) and logged.
 */
public final class DeliveryOutcome implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.outcomes");

    /** Per relay, not per process: a window of its own for each relay a JVM runs. */
    private final RateLimitedLog partialSuccesses = new RateLimitedLog(LOG, Duration.ofSeconds(10));

    private final StatusPolicy statuses;
    private final EntryFates fates;
    private final RejectedItems rejectedItems;

    public DeliveryOutcome(StatusPolicy statuses, EntryFates fates, RejectedItems rejectedItems) {
        this.statuses = statuses;
        this.fates = fates;
        this.rejectedItems = rejectedItems;
    }

    @Override
    public void process(Exchange exchange) {
        Attempt attempt = DeliveryExchange.attempt(exchange);
        Shipment shipment = DeliveryExchange.shipment(exchange);
        List<SpoolEntry> delivered = new ArrayList<>();
        List<Refused> refused = new ArrayList<>();
        Set<Long> again = new HashSet<>();
        var batchAnswer = DeliveryExchange.batchAnswer(exchange);
        String answerType = DeliveryExchange.answer(exchange).contentType();
        if (batchAnswer.isPresent()) {
            for (int i = 0; i < shipment.size(); i++) {
                SpoolEntry entry = shipment.entries().get(i);
                BatchAnswer.EntryOutcome outcome = batchAnswer.get().entries().get(i);
                switch (statuses.classify(outcome.status())) {
                    case DELIVERED -> {
                        delivered.add(entry);
                        reportDeliveredInBatch(entry, outcome);
                    }
                    case PERMANENT -> refused.add(new Refused(entry, PermanentRefusal.refusedInBatch(attempt.upstream(),
                            outcome.status(), outcome.reason())));
                    case RETRYABLE -> again.add(entry.seq());
                }
            }
        } else if (attempt.kind() == Attempt.Kind.PERMANENT) {
            refused.add(new Refused(shipment.first(), PermanentRefusal.refusedBy(attempt, answerType)));
        } else {
            // One entry, or a merge: a sender that waits for its entry gets the answer to the request that carried it.
            for (SpoolEntry entry : shipment.entries()) {
                delivered.add(entry);
                fates.delivered(entry.seq(), attempt.status().orElse(200), orEmpty(answerType), attempt.answer());
            }
            PartialSuccess.of(answerType, attempt.answer()).ifPresent(partial -> rejected(shipment, attempt, partial));
        }
        if (!again.isEmpty()) {
            LOG.warn("upstream={} answered {} entries of a batch retryably: they go back to the spool",
                    attempt.upstream().label(), again.size());
        }
        exchange.setProperty(DeliveryExchange.DELIVERED, delivered);
        exchange.setProperty(DeliveryExchange.REFUSED, refused);
        DeliveryExchange.setAgain(exchange, again);
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

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
