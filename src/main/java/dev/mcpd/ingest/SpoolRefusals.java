package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.spool.SpoolFullException;
import dev.mcpd.spool.SpoolWriteException;
import java.time.Duration;
import org.slf4j.LoggerFactory;

/**
 * What a failed spool write means to the sender: at the spool's bound, 503 and {@code Retry-After} ("the relay's spool
 * is full"); when the disk failed the write, the same with its own reason, and a log line. Nothing of the request was
 * kept either way: the sender holds it and retries.
 */
public final class SpoolRefusals {

    /** A full disk fails every request: one line a second tells the story. */
    private static final RateLimitedLog LOG =
            new RateLimitedLog(LoggerFactory.getLogger(SpoolRefusals.class), Duration.ofSeconds(1));

    private SpoolRefusals() {
    }

    /**
     * The refusal for {@code failure}, or null when it is not the spool's: an append fails only with these two, so any
     * other failure (an {@code IOException} of another step among them) stays a fault, logged in full.
     */
    public static IngestRefusal of(Throwable failure) {
        if (failure instanceof SpoolFullException) {
            return IngestRefusal.spoolFull(false);
        }
        if (failure instanceof SpoolWriteException) {
            LOG.warn("spool-write", "spool write failed, answering 503: " + failure.getMessage());
            return IngestRefusal.unavailable("the spool could not store the request; retry later");
        }
        return null;
    }
}
