package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamWindow;
import java.util.Optional;
import org.apache.camel.Exchange;

/**
 * What the delivery route's steps hand each other on the exchange, in one place: the {@link Shipment} being delivered
 * and where it goes — the upstream, the target at it, the place in its window (set by the spool consumer's lane, which
 * chose them before it packed the shipment) —, the request it makes (set by {@link UpstreamRequest}), what came back
 * (set by the sender), and how the exchange ends for each entry (set by {@link DeliveryOutcome}, or by the lane when it
 * was decided without a request; read by the steps after it and by the spool consumer).
 */
final class DeliveryExchange {

    private static final String SHIPMENT = "mcpd.shipment";
    private static final String UPSTREAM = "mcpd.upstream";
    private static final String TARGET = "mcpd.upstream-target";
    private static final String SLOT = "mcpd.upstream-slot";
    private static final String STARTED = "mcpd.sent-at-nanos";
    /** {@code http} or {@code kafka}: which sender the route runs (none when the outcome was decided unsent). */
    static final String SEND_TO = "mcpdSendTo";
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

    /**
     * Where the attempt goes: the upstream, the path and query at it, and the place in its window the request holds
     * until its answer is judged; sent from now.
     */
    static void setDestination(Exchange exchange, Upstream upstream, String target, UpstreamWindow.Slot slot) {
        exchange.setProperty(UPSTREAM, upstream);
        exchange.setProperty(TARGET, target);
        exchange.setProperty(SLOT, slot);
        exchange.setProperty(SEND_TO, upstream.isKafka() ? "kafka" : "http");
        exchange.setProperty(STARTED, System.nanoTime());
    }

    /** The place in the upstream's window the attempt holds; empty when nothing was sent. */
    static Optional<UpstreamWindow.Slot> slot(Exchange exchange) {
        return Optional.ofNullable(exchange.getProperty(SLOT, UpstreamWindow.Slot.class));
    }

    /** When the attempt was sent, {@link System#nanoTime()}. */
    static long sentAtNanos(Exchange exchange) {
        return exchange.getProperty(STARTED, Long.class);
    }

    static Upstream upstream(Exchange exchange) {
        return exchange.getProperty(UPSTREAM, Upstream.class);
    }

    static String target(Exchange exchange) {
        return exchange.getProperty(TARGET, String.class);
    }

    /** The request the attempt sends, made for its upstream. */
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

    /** How the exchange ends for each entry: set once, by the judge of the answer (or by the lane, when nothing is sent). */
    static void setOutcome(Exchange exchange, ShipmentOutcome outcome) {
        exchange.setProperty(OUTCOME, outcome);
    }

    /** Empty until the outcome is decided (and when the exchange failed before it was). */
    static Optional<ShipmentOutcome> outcome(Exchange exchange) {
        return Optional.ofNullable(exchange.getProperty(OUTCOME, ShipmentOutcome.class));
    }
}
