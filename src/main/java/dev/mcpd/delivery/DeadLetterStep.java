package dev.mcpd.delivery;

import dev.mcpd.logs.SenderText;
import dev.mcpd.routing.Resume;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.List;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each entry the outcome sends to dead/ — refused for good (the request, or an entry of a batch alone),
 * unsendable, or expired — with why, durably, and logs it. Writing a dead letter forces files: it runs off the event
 * loop. The spool consumer then removes the entries from the spool, as for a delivery.
 */
public final class DeadLetterStep extends AsyncProcessorSupport {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.dead");

    private final DeadLetters deadLetters;
    private final EntryFates fates;
    private final InstantSource clock;

    private final SpoolExpiry expiry;

    public DeadLetterStep(DeadLetters deadLetters, InstantSource clock, EntryFates fates, SpoolExpiry expiry) {
        this.deadLetters = deadLetters;
        this.expiry = expiry;
        this.fates = fates;
        this.clock = clock;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        List<ShipmentOutcome.DeadLettered> refused = DeliveryExchange.outcome(exchange)
                .map(ShipmentOutcome::deadLettered).orElse(List.of());
        if (refused.isEmpty()) {
            callback.done(true);
            return true;
        }
        return Resume.blocking(exchange, callback, () -> {
            for (ShipmentOutcome.DeadLettered each : refused) {
                keep(each);
            }
        });
    }

    /** The first line of the receiver's answer ({@code out of order sample}, say): what an operator reads first. */
    static String firstLine(byte[] answerHead) {
        String answer = new String(answerHead, StandardCharsets.UTF_8).strip();
        int end = answer.indexOf('\n');
        return (end < 0 ? answer : answer.substring(0, end)).strip();
    }

    private void keep(ShipmentOutcome.DeadLettered refused) throws IOException {
        PermanentRefusal refusal = refused.why();
        SpoolEntry entry = refused.entry();
        deadLetters.keep(entry, refusal.refusal(clock.instant()));
        // Told only once it is durable in dead/: a sender waiting for it learns the refusal.
        if (refusal.expiry()) {
            fates.deadLettered(entry.seq(), SpoolExpiry.STATUS, refusal.answerContentType(), refusal.answerHead());
            expiry.counted(); // logged with the sweep's count, not one line per entry
            return;
        }
        fates.deadLettered(entry.seq(), refusal.status() == 0 ? 400 : refusal.status(), refusal.answerContentType(),
                refusal.answerHead());
        LOG.warn("dead-lettered seq={} target=\"{}\" upstream={} reason=\"{}\" answer=\"{}\" kept_in={}", entry.seq(),
                SenderText.quote(entry.request().target()), refusal.upstream(), refusal.reason(),
                SenderText.quote(firstLine(refusal.answerHead())), deadLetters.directory());
    }
}
