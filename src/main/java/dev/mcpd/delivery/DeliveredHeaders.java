package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * What an operator's route at {@code direct:mcpd-after-delivery} reads of one delivered entry (the route hands it
 * each, a batch's entries one by one), as plain headers: {@code McpdSeq}, {@code McpdTarget},
 * {@code McpdIdempotencyKey}, {@code McpdUpstream}, {@code McpdStatus}.
 */
public final class DeliveredHeaders implements Processor {

    @Override
    public void process(Exchange exchange) {
        Message message = exchange.getMessage();
        SpoolEntry entry = message.getBody(SpoolEntry.class);
        Attempt attempt = DeliveryExchange.attempt(exchange);
        message.setHeader("McpdSeq", entry.seq());
        message.setHeader("McpdTarget", entry.request().target());
        message.setHeader("McpdIdempotencyKey", entry.request().idempotencyKey());
        message.setHeader("McpdUpstream", attempt.upstream().label());
        message.setHeader("McpdStatus", DeliveryExchange.batchAnswer(exchange).isPresent() ? 200
                : attempt.status().orElse(0));
    }
}
