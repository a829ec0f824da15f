package dev.mcpd.delivery;

import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.time.Instant;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter channel's one step: keeps a permanently refused entry in dead/ with why, durably, and logs it. The
 * spool consumer then removes the entry from the spool, as for a delivery.
 */
public final class DeadLetterStep implements Processor {

    /** How much of the upstream's answer is kept beside a dead letter. */
    static final int ANSWER_HEAD_BYTES = 1024;

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.dead");

    private final DeadLetters deadLetters;

    public DeadLetterStep(DeadLetters deadLetters) {
        this.deadLetters = deadLetters;
    }

    @Override
    public void process(Exchange exchange) throws IOException {
        PermanentRefusal refusal = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, PermanentRefusal.class);
        SpoolEntry entry = exchange.getProperty(UpstreamFailover.ENTRY, SpoolEntry.class);
        Attempt attempt = refusal.attempt();
        deadLetters.keep(entry, new DeadLetters.Refusal(attempt.upstream().label(), attempt.status().orElse(0),
                Instant.now(), attempt.answerHead(ANSWER_HEAD_BYTES)));
        LOG.warn("dead-lettered seq={} target={} upstream={} status={} kept_in={}", entry.seq(),
                entry.request().target(), attempt.upstream().label(), attempt.cause(), deadLetters.directory());
    }
}
