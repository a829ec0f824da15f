package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import org.apache.camel.Exchange;

/**
 * What the delivery route's steps hand each other on the exchange, in one place: the {@link Shipment} being delivered
 * (set by the spool consumer), the upstream and URL an attempt goes to (set by the failover load balancer on its copy,
 * read by the HTTP binding), and the final attempt (read by the steps after the load balancer).
 */
final class DeliveryExchange {

    private static final String SHIPMENT = "mcpd.shipment";
    private static final String ATTEMPT = "mcpd.attempt";
    private static final String UPSTREAM = "mcpd.upstream";
    private static final String URL = "mcpd.upstream-url";
    private static final String AGAIN = "mcpd.again";
    private static final String BATCH_ANSWER = "mcpd.batch-answer";
    /** The entries delivered and those refused for good, for the route's splits (simple reads these names). */
    static final String DELIVERED = "McpdDelivered";
    static final String REFUSED = "McpdRefused";

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

    static void setDestination(Exchange exchange, Upstream upstream, String url) {
        exchange.setProperty(UPSTREAM, upstream);
        exchange.setProperty(URL, url);
    }

    static Upstream upstream(Exchange exchange) {
        return exchange.getProperty(UPSTREAM, Upstream.class);
    }

    static String url(Exchange exchange) {
        return exchange.getProperty(URL, String.class);
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
