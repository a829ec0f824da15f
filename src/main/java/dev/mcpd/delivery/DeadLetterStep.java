package dev.mcpd.delivery;

import dev.mcpd.http.SenderText;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.time.InstantSource;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter channel's one step: keeps a permanently refused (or unsendable) entry in dead/ with why, durably,
 * and logs it. The spool consumer then removes the entry from the spool, as for a delivery.
 */
public final class DeadLetterStep implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.dead");

    private final DeadLetters deadLetters;
    private final InstantSource clock;

    public DeadLetterStep(DeadLetters deadLetters, InstantSource clock) {
        this.deadLetters = deadLetters;
        this.clock = clock;
    }

    @Override
    public void process(Exchange exchange) throws IOException {
        PermanentRefusal refusal = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, PermanentRefusal.class);
        SpoolEntry entry = DeliveryExchange.entry(exchange);
        deadLetters.keep(entry, refusal.refusal(clock.instant()));
        LOG.warn("dead-lettered seq={} target=\"{}\" upstream={} reason=\"{}\" kept_in={}", entry.seq(),
                SenderText.quote(entry.request().target()), refusal.upstream(), refusal.reason(),
                deadLetters.directory());
    }
}
