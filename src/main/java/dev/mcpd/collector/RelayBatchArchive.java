package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.store.Archived;
import dev.mcpd.store.ReadEntry;
import dev.mcpd.store.StoreUnavailable;
import java.time.Duration;
import java.util.List;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.LoggerFactory;

/**
 * Archives the readable entries of a relay batch in one transaction, each deduplicated by its own key. When the
 * store does not answer, the whole batch is answered 503 + Retry-After and nothing is counted: the relay sends it
 * again, and entries that were committed after all are recognised by their keys.
 */
public final class RelayBatchArchive implements Processor {

    private static final RateLimitedLog LOG =
            new RateLimitedLog(LoggerFactory.getLogger(RelayBatchArchive.class), Duration.ofSeconds(1));

    private final BatchArchiver archiver;

    RelayBatchArchive(BatchArchiver archiver) {
        this.archiver = archiver;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void process(Exchange exchange) {
        List<ReadEntry> entries = exchange.getProperty(RelayBatchReader.ENTRIES, List.class);
        List<ReadEntry> readable = entries.stream().filter(e -> e.batch().isPresent()).toList();
        if (readable.isEmpty()) {
            return;
        }
        List<Archived> archived;
        try {
            archived = archiver.archive(RequestSender.of(exchange), readable.stream().map(e -> e.batch().orElseThrow())
                    .toList());
        } catch (StoreUnavailable e) {
            LOG.warn("store", "store not answering, relay batch answered 503: " + e.getMessage());
            throw IngestRefusal.unavailable("the collector's store is not answering; retry later");
        }
        for (int i = 0; i < readable.size(); i++) {
            readable.get(i).archived(archived.get(i));
        }
    }
}
