package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.store.Archived;
import dev.mcpd.store.Batch;
import dev.mcpd.store.StoreUnavailable;
import java.time.Duration;
import java.util.List;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.LoggerFactory;

/**
 * Archives the batch (deduplicating by its key, in one transaction) and counts what happened. When the store does
 * not answer, the sender is told to retry (503 + Retry-After) and nothing is counted.
 */
public final class ArchiveStep implements Processor {

    /** Exchange property holding the {@link Archived} counts. */
    public static final String ARCHIVED = "mcpd.archived";

    private static final RateLimitedLog LOG =
            new RateLimitedLog(LoggerFactory.getLogger(ArchiveStep.class), Duration.ofSeconds(1));

    private final BatchArchiver archiver;

    ArchiveStep(BatchArchiver archiver) {
        this.archiver = archiver;
    }

    @Override
    public void process(Exchange exchange) {
        Batch batch = exchange.getProperty(BatchReader.BATCH, Batch.class);
        Archived archived;
        try {
            archived = archiver.archive(RequestSender.of(exchange), List.of(batch)).get(0);
        } catch (StoreUnavailable e) {
            LOG.warn("store", "store not answering, ingest answered 503: " + e.getMessage());
            throw IngestRefusal.unavailable("the collector's store is not answering; retry later");
        }
        exchange.setProperty(ARCHIVED, archived);
    }
}
