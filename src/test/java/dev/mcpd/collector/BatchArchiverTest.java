package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.store.Archived;
import dev.mcpd.store.Batch;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.Sender;
import dev.mcpd.store.StoreLocation;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector's one way into the store: requests of one sender in one transaction, each deduplicated by its key,
 * counted by path (without the query) and the store's time recorded once per transaction.
 */
class BatchArchiverTest {

    @TempDir
    Path dir;

    private static Batch batch(String key, String target) {
        return new Batch(Optional.of(key), target, "application/json", "", System.currentTimeMillis(), 2, 0,
                "{\"events\":[{},{}]}".getBytes(StandardCharsets.UTF_8));
    }

    private static double count(MeterRegistry registry, String name, String path) {
        return registry.counter(name, "path", path).count();
    }

    @Test
    void eachRequestIsKeptOnceCountedByItsPathAndTheStoreTimedPerTransaction() {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (JdbcStore store = JdbcStore.open(StoreLocation.of(dir.resolve("mcpd.db").toString()))) {
            BatchArchiver archiver = new BatchArchiver(store, new CollectorMetrics(registry));
            List<Archived> first = archiver.archive(Sender.NONE, List.of(batch("a", "/v1/ingest?tenant=x"),
                    batch("b", "/v1/logs")));
            assertEquals(List.of(2, 2), first.stream().map(Archived::accepted).toList());
            assertEquals(2, count(registry, "mcpd.ingest.accepted", "/v1/ingest"), "counted without the query");
            assertEquals(2, count(registry, "mcpd.ingest.accepted", "/v1/logs"));

            Archived again = archiver.archive(Sender.NONE, List.of(batch("a", "/v1/ingest"))).get(0);
            assertEquals(0, again.accepted(), "a request is a batch of one, deduplicated by its key");
            assertEquals(2, again.duplicate());
            assertEquals(2, count(registry, "mcpd.ingest.duplicate", "/v1/ingest"));
            assertEquals(2, registry.get("mcpd.store.latency").timer().count(), "one per transaction");
        }
    }
}
