package dev.mcpd.delivery;

import dev.mcpd.routing.ExtensionPoint;
import dev.mcpd.spool.SpoolEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;
import org.apache.camel.support.DefaultExchange;

/**
 * The extension point after delivery ({@code direct:mcpd-after-delivery}): when an operator's route consumes it, each
 * delivered entry goes through it on its own exchange — a batch's entries one by one — with what the route reads of
 * it as plain headers ({@code McpdSeq}, {@code McpdTarget}, {@code McpdIdempotencyKey}, {@code McpdUpstream},
 * {@code McpdStatus}) and the upstream's answer as the body. It runs on a worker thread (an operator's step may
 * block); a failure there fails the delivery, so its entries go again. Without such a route it costs nothing.
 */
public final class AfterDelivery extends AsyncProcessorSupport {

    private final ExtensionPoint point = new ExtensionPoint("mcpd-after-delivery");

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        return point.each(exchange, callback, () -> {
            List<Exchange> each = new ArrayList<>();
            Optional<ShipmentOutcome> outcome = DeliveryExchange.outcome(exchange);
            if (outcome.isEmpty() || outcome.get().upstream().isEmpty()) {
                return each;
            }
            String upstream = outcome.get().upstream().get().label();
            for (ShipmentOutcome.Delivered delivered : outcome.get().delivered()) {
                SpoolEntry entry = delivered.entry();
                Exchange one = new DefaultExchange(exchange.getContext());
                one.getMessage().setHeader("McpdSeq", entry.seq());
                one.getMessage().setHeader("McpdTarget", entry.request().target());
                one.getMessage().setHeader("McpdIdempotencyKey", entry.request().idempotencyKey());
                one.getMessage().setHeader("McpdUpstream", upstream);
                one.getMessage().setHeader("McpdStatus", delivered.status());
                one.getMessage().setBody(delivered.answer());
                each.add(one);
            }
            return each;
        });
    }

    @Override
    protected void doStop() throws Exception {
        point.stop();
    }
}
