package dev.mcpd.collector;

import dev.mcpd.http.Answers;
import dev.mcpd.http.IngestRefusal;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.StoreStats;
import dev.mcpd.store.StoreUnavailable;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * {@code GET /v1/stats}: {@code {"batches":N,"events":N,"duplicates":N,"conflicts":N}}, what the store holds;
 * {@code conflicts} counts the duplicate copies whose key their sender had used for another body.
 */
public final class StatsAnswer implements Processor {

    private final JdbcStore store;

    public StatsAnswer(JdbcStore store) {
        this.store = store;
    }

    @Override
    public void process(Exchange exchange) {
        StoreStats stats;
        try {
            stats = store.stats();
        } catch (StoreUnavailable e) {
            throw IngestRefusal.unavailable("the collector's store is not answering; retry later");
        }
        Message answer = exchange.getMessage();
        Answers.write(answer, 200, Answers.JSON, Answers.text("{\"batches\":" + stats.batches() + ",\"events\":"
                + stats.events() + ",\"duplicates\":" + stats.duplicates() + ",\"conflicts\":" + stats.conflicts() + "}"));
    }
}
