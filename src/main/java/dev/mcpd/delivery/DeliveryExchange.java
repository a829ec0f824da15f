package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.BatchAnswer;

import dev.mcpd.spool.SpoolEntry;
import org.apache.camel.Exchange;

/**
 * What the delivery route's steps hand each other on the exchange, in one place: the {@link Shipment} being delivered
 * (set by the spool consumer), the request it makes (set by {@link UpstreamRequest}), the upstream and target an attempt
 * goes to (set by the failover load balancer, read by {@link UpstreamHttp}), what came back (set by the sender), and the
 * final attempt (read by the steps after the load balancer).
 */
final class DeliveryExchange {

    private static final String SHIPMENT = "mcpd.shipment";
    private static final String ATTEMPT = "mcpd.attempt";
    private static final String UPSTREAM = "mcpd.upstream";
    private static final String TARGET = "mcpd.upstream-target";
    private static final String REQUEST = "mcpd.request";
    private static final String ANSWER = "mcpd.answer";
    private static final String AGAIN = "mcpd.again";
    private static final String BATCH_ANSWER = "mcpd.batch-answer";
    static final String DELIVERED = "mcpd.delivered";
    static final String REFUSED = "mcpd.refused";

    private DeliveryExchange() {
    }

    static void setShipment(Exchange exchange, Shipment shipment) {
        exchange.setProperty(SHIPMENT, shipment);
    }

    static Shipment shipment(Exchange exchange) {
        return exchange.getProperty(SHIPMENT, Shipment.class);
    }

    /** The first (for a single shipment, the only) entry. */
    static SpoolEntry entry(Exchange exchange) {
        return shipment(exchange).first();
    }

    /** Where the attempt goes: the upstream, and the path and query at it. */
    static void setDestination(Exchange exchange, Upstream upstream, String target) {
        exchange.setProperty(UPSTREAM, upstream);
        exchange.setProperty(TARGET, target);
    }

    static Upstream upstream(Exchange exchange) {
        return exchange.getProperty(UPSTREAM, Upstream.class);
    }

    static String target(Exchange exchange) {
        return exchange.getProperty(TARGET, String.class);
    }

    /** The request every attempt of the shipment sends (set once, before the first). */
    static void setRequest(Exchange exchange, OutgoingRequest request) {
        exchange.setProperty(REQUEST, request);
    }

    static OutgoingRequest request(Exchange exchange) {
        return exchange.getProperty(REQUEST, OutgoingRequest.class);
    }

    /** What the latest attempt got back. */
    static void setAnswer(Exchange exchange, UpstreamAnswer answer) {
        exchange.setProperty(ANSWER, answer);
    }

    static UpstreamAnswer answer(Exchange exchange) {
        return exchange.getProperty(ANSWER, UpstreamAnswer.class);
    }

    /** Entries of a batch the upstream answered retryably, each for itself: they go back to the spool. */
    static void setAgain(Exchange exchange, java.util.Set<Long> seqs) {
        exchange.setProperty(AGAIN, java.util.Set.copyOf(seqs));
    }

    @SuppressWarnings("unchecked")
    static java.util.Set<Long> again(Exchange exchange) {
        java.util.Set<Long> seqs = exchange.getProperty(AGAIN, java.util.Set.class);
        return seqs == null ? java.util.Set.of() : seqs;
    }

    /** The entries the final attempt delivered (empty until it is known). */
    @SuppressWarnings("unchecked")
    static java.util.List<SpoolEntry> delivered(Exchange exchange) {
        java.util.List<SpoolEntry> entries = exchange.getProperty(DELIVERED, java.util.List.class);
        return entries == null ? java.util.List.of() : entries;
    }

    /** The entries refused for good, each with its refusal (empty until it is known). */
    @SuppressWarnings("unchecked")
    static java.util.List<Refused> refused(Exchange exchange) {
        java.util.List<Refused> entries = exchange.getProperty(REFUSED, java.util.List.class);
        return entries == null ? java.util.List.of() : entries;
    }

    static void setBatchAnswer(Exchange exchange, BatchAnswer answer) {
        exchange.setProperty(BATCH_ANSWER, answer);
    }

    static java.util.Optional<BatchAnswer> batchAnswer(Exchange exchange) {
        return java.util.Optional.ofNullable(exchange.getProperty(BATCH_ANSWER, BatchAnswer.class));
    }

    static void setAttempt(Exchange exchange, Attempt attempt) {
        exchange.setProperty(ATTEMPT, attempt);
    }

    static Attempt attempt(Exchange exchange) {
        return exchange.getProperty(ATTEMPT, Attempt.class);
    }
}
