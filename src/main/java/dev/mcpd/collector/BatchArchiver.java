package dev.mcpd.collector;

import dev.mcpd.store.Archived;
import dev.mcpd.store.Batch;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.Sender;
import dev.mcpd.store.StoreUnavailable;
import java.time.Duration;
import java.util.List;

/**
 * The collector's one way into the store, whichever way the requests came (an HTTP request, a relay batch, a poll of
 * the Kafka source): the requests of one sender archived in one transaction, each deduplicated by its own key, the
 * store's time recorded and what happened counted by path. A single request is a batch of one. What a store that
 * does not answer means ({@link StoreUnavailable}) is the caller's to say: a 503 to a sender, a poll read again.
 */
final class BatchArchiver {

    private final JdbcStore store;
    private final CollectorMetrics metrics;

    BatchArchiver(JdbcStore store, CollectorMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    /** What happened to each of {@code batches}, in order: all are kept, or none (then StoreUnavailable). */
    List<Archived> archive(Sender sender, List<Batch> batches) {
        long started = System.nanoTime();
        List<Archived> archived;
        try {
            archived = store.archiveAll(sender, batches);
        } finally {
            metrics.storeLatency(Duration.ofNanos(System.nanoTime() - started));
        }
        for (int i = 0; i < batches.size(); i++) {
            metrics.archived(pathOf(batches.get(i).target()), archived.get(i));
        }
        return archived;
    }

    /** The path of a request target, without its query: what the counters are labelled by. */
    static String pathOf(String target) {
        int query = target.indexOf('?');
        return query < 0 ? target : target.substring(0, query);
    }
}
