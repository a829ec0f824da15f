package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import org.apache.camel.Exchange;

/**
 * What the delivery route's steps hand each other on the exchange, in one place: the spool entry being delivered (set
 * by the spool consumer) and the final attempt (set by the failover load balancer, read by the steps after it).
 */
final class DeliveryExchange {

    private static final String ENTRY = "mcpd.entry";
    private static final String ATTEMPT = "mcpd.attempt";

    private DeliveryExchange() {
    }

    static void setEntry(Exchange exchange, SpoolEntry entry) {
        exchange.setProperty(ENTRY, entry);
    }

    static SpoolEntry entry(Exchange exchange) {
        return exchange.getProperty(ENTRY, SpoolEntry.class);
    }

    static void setAttempt(Exchange exchange, Attempt attempt) {
        exchange.setProperty(ATTEMPT, attempt);
    }

    static Attempt attempt(Exchange exchange) {
        return exchange.getProperty(ATTEMPT, Attempt.class);
    }
}
