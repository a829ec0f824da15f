package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.Upstream;
import java.util.Optional;
import org.apache.camel.Exchange;

/**
 * What the delivery route's steps hand each other on the exchange, in one place: the {@link Shipment} being delivered
 * (set by the spool consumer), the request it makes (set by {@link UpstreamRequest}), the upstream and target an attempt
 * goes to (set by the failover load balancer, read by the senders), what came back (set by the sender), and how the
 * exchange ends for each entry (set by the load balancer, read by the steps after it and by the spool consumer).
 */
final class DeliveryExchange {

    private static final String SHIPMENT = "mcpd.shipment";
    private static final String UPSTREAM = "mcpd.upstream";
    private static final String TARGET = "mcpd.upstream-target";
    private static final String REQUEST = "mcpd.request";
    private static final String ANSWER = "mcpd.answer";
    private static final String OUTCOME = "mcpd.outcome";

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

    /** How the exchange ends for each entry: set once, by the load balancer (or before it, when nothing can be sent). */
    static void setOutcome(Exchange exchange, ShipmentOutcome outcome) {
        exchange.setProperty(OUTCOME, outcome);
    }

    /** Empty until the outcome is decided (and when the exchange failed before it was). */
    static Optional<ShipmentOutcome> outcome(Exchange exchange) {
        return Optional.ofNullable(exchange.getProperty(OUTCOME, ShipmentOutcome.class));
    }
}
