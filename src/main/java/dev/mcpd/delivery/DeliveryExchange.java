package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import org.apache.camel.Exchange;

/**
 * What the delivery route's steps hand each other on the exchange, in one place: the spool entry being delivered (set
 * by the spool consumer), the upstream and URL an attempt goes to (set by the failover load balancer on its copy,
 * read by the HTTP binding), and the final attempt (read by the steps after the load balancer).
 */
final class DeliveryExchange {

    private static final String ENTRY = "mcpd.entry";
    private static final String ATTEMPT = "mcpd.attempt";
    private static final String UPSTREAM = "mcpd.upstream";
    private static final String URL = "mcpd.upstream-url";

    private DeliveryExchange() {
    }

    static void setEntry(Exchange exchange, SpoolEntry entry) {
        exchange.setProperty(ENTRY, entry);
    }

    static SpoolEntry entry(Exchange exchange) {
        return exchange.getProperty(ENTRY, SpoolEntry.class);
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

    static void setAttempt(Exchange exchange, Attempt attempt) {
        exchange.setProperty(ATTEMPT, attempt);
    }

    static Attempt attempt(Exchange exchange) {
        return exchange.getProperty(ATTEMPT, Attempt.class);
    }
}
