package dev.mcpd.delivery;

import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.Spool;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.stream.Collectors;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the dead letters {@code mcpd relay dead replay} handed over ({@link ReplayInbox}) into the spool, through the
 * spool's own append path: at start and every second (route {@code replay-intake}), so a running relay delivers them
 * without a restart. An entry that does not fit the spool's bound waits in {@code replay/} for room.
 */
public final class ReplayIntake implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.replay");
    /** A full spool or a failing disk would say so every second: once a minute per kind tells it. */
    private static final RateLimitedLog ONCE_A_MINUTE = new RateLimitedLog(LOG, Duration.ofMinutes(1));

    private final ReplayInbox inbox;
    private final Spool spool;
    private final InstantSource clock;

    public ReplayIntake(ReplayInbox inbox, Spool spool, InstantSource clock) {
        this.inbox = inbox;
        this.spool = spool;
        this.clock = clock;
    }

    @Override
    public void process(Exchange exchange) {
        ReplayInbox.Adoption adoption;
        try {
            adoption = inbox.adoptInto(spool, clock.millis());
        } catch (IOException e) {
            // The entries stay where they are (replay/, or dead/): tried again in a second, told once a minute.
            ONCE_A_MINUTE.warn("replay-failed", "could not take replayed dead letters from " + inbox.directory()
                    + " into the spool: " + e.getMessage() + "; they stay there and are tried again");
            return;
        }
        if (!adoption.taken().isEmpty()) {
            LOG.info("took {} replayed dead letter(s) into the spool: {}", adoption.taken().size(),
                    adoption.taken().stream().limit(10).map(t -> "dead " + t.deadSeq() + " as seq " + t.seq())
                            .collect(Collectors.joining(", ")) + (adoption.taken().size() > 10 ? ", …" : ""));
        }
        for (ReplayInbox.Damaged damaged : adoption.damaged()) {
            LOG.error("replayed dead letter {} cannot be read and was moved to {}: {}; the others are taken",
                    damaged.deadSeq(), damaged.keptIn(), damaged.why());
        }
        if (adoption.spoolFull()) {
            ONCE_A_MINUTE.warn("replay-full", "replayed dead letters wait in " + inbox.directory() + ": the spool is full"
                    + " (--spool-max-bytes); they are taken as delivery frees room");
        }
    }
}
