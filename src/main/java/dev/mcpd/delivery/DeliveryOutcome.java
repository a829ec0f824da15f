package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the final attempt means: a delivery ends here (the spool consumer then removes the entry); a permanent refusal
 * is thrown as {@link PermanentRefusal} for the dead-letter configuration. An OTLP 200 that reports rejected items is
 * a delivery — the OTLP specification forbids retrying it — and the rejected count is logged. A delivery leaves
 * headers for operators' routes: {@code McpdSeq}, {@code McpdTarget}, {@code McpdIdempotencyKey},
 * {@code McpdUpstream}, {@code McpdStatus}.
 */
public final class DeliveryOutcome implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.outcomes");

    @Override
    public void process(Exchange exchange) {
        Attempt attempt = DeliveryExchange.attempt(exchange);
        SpoolEntry entry = DeliveryExchange.entry(exchange);
        if (attempt.kind() == Attempt.Kind.PERMANENT) {
            throw PermanentRefusal.refusedBy(attempt);
        }
        // What an operator's route at direct:mcpd-after-delivery may read, as plain headers.
        var message = exchange.getMessage();
        message.setHeader("McpdSeq", entry.seq());
        message.setHeader("McpdTarget", entry.request().target());
        message.setHeader("McpdIdempotencyKey", entry.request().idempotencyKey());
        message.setHeader("McpdUpstream", attempt.upstream().label());
        message.setHeader("McpdStatus", attempt.status().orElse(0));
        PartialSuccess.of(exchange.getMessage().getHeader(Exchange.CONTENT_TYPE, String.class), attempt.answer())
                .ifPresent(partial -> LOG.warn("delivered seq={} upstream={} with rejected={} message=\"{}\"",
                        entry.seq(), attempt.upstream().label(), partial.rejected(), partial.message()));
    }
}
