package dev.mcpd.ingest;

import dev.mcpd.endpoint.SpoolMessage;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.SpoolFullException;
import dev.mcpd.spool.SpoolRequest;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.stream.Collectors;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.ProducerTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the dead letters {@code mcpd relay dead replay} handed over ({@link ReplayInbox}) into the spool, each written
 * through the spool endpoint ({@code spool:relay}) as a sender's request is: at start and every second (route
 * {@code replay-intake}), so a running relay delivers them without a restart. An entry that does not fit the spool's
 * bound waits in {@code replay/} for room.
 */
public final class ReplayIntake implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.replay");
    /** A full spool or a failing disk would say so every second: once a minute per kind tells it. */
    private static final RateLimitedLog ONCE_A_MINUTE = new RateLimitedLog(LOG, Duration.ofMinutes(1));

    private final ReplayInbox inbox;
    private final String spoolUri;
    private final InstantSource clock;
    /** Made at the first pass, stopped with the Camel context. */
    private ProducerTemplate writer;

    /** @param spoolUri the spool endpoint the entries are written to ({@code spool:relay}) */
    public ReplayIntake(ReplayInbox inbox, String spoolUri, InstantSource clock) {
        this.inbox = inbox;
        this.spoolUri = spoolUri;
        this.clock = clock;
    }

    @Override
    public void process(Exchange exchange) throws Exception {
        if (writer == null) { // the route's timer runs one pass at a time
            writer = exchange.getContext().createProducerTemplate();
            exchange.getContext().addService(writer, true, false);
        }
        ReplayInbox.Adoption adoption;
        try {
            adoption = inbox.adoptInto(this::write, clock.millis());
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

    /** One entry through {@code to: spool:relay}: its sequence number once durable, or why it was not written. */
    private long write(SpoolRequest request) throws IOException {
        Exchange written = writer.send(spoolUri, message -> message.getIn().setBody(request));
        Exception failure = written.getException();
        if (failure instanceof SpoolFullException full) {
            throw full;
        }
        if (failure != null) {
            throw new IOException(failure.getMessage(), failure);
        }
        return SpoolMessage.seq(written);
    }
}
