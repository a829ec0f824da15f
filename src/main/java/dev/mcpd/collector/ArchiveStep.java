package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.logs.RateLimitedLog;
import java.time.Duration;
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

    private final JdbcStore store;
    private final CollectorMetrics metrics;

    public ArchiveStep(JdbcStore store, CollectorMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    @Override
    public void process(Exchange exchange) {
        Batch batch = exchange.getProperty(BatchReader.BATCH, Batch.class);
        long started = System.nanoTime();
        Archived archived;
        try {
            archived = store.archive(Sender.of(exchange), batch);
        } catch (StoreUnavailable e) {
            LOG.warn("store", "store not answering, ingest answered 503: " + e.getMessage());
            throw IngestRefusal.unavailable("the collector's store is not answering; retry later");
        } finally {
            metrics.storeLatency(Duration.ofNanos(System.nanoTime() - started));
        }
        metrics.archived(pathOf(batch.target()), archived);
        exchange.setProperty(ARCHIVED, archived);
    }

    static String pathOf(String target) {
        int query = target.indexOf('?');
        return query < 0 ? target : target.substring(0, query);
    }
}
