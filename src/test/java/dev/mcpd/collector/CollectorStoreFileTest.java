package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.ingest;
import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.CollectorHttp.Counts;
import dev.mcpd.collector.CollectorHttp.Stats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded SQLite store: created when missing, and what it holds survives a restart. */
class CollectorStoreFileTest {

    static final String KEYED = "{\"idempotency_key\":\"restart-1\",\"events\":[{\"a\":1},{\"b\":2},false]}";

    @TempDir
    Path dir;

    @Test
    void theSqliteFileAndItsMissingFoldersAreCreatedAtStart() {
        Path file = dir.resolve("not").resolve("yet").resolve("there").resolve("mcpd.db");
        assertFalse(Files.exists(file.getParent()));

        try (RunningCollector collector = RunningCollector.startOn(file, Map.of())) {
            assertTrue(Files.isRegularFile(file), "the store file exists");
            assertEquals(new Counts(1, 0, 0), ingest(collector, postJson(collector.uri("/v1/ingest"),
                    "{\"events\":[{}]}")));
            assertEquals(new Stats(1, 1, 0), stats(collector));
        }
    }

    @Test
    void aRestartedCollectorReportsTheSameStats() {
        Stats before;
        try (RunningCollector collector = RunningCollector.start(dir)) {
            ingest(collector, postJson(collector.uri("/v1/ingest"), "{\"events\":[{},{}]}"));
            ingest(collector, postJson(collector.uri("/v1/ingest"), KEYED));
            ingest(collector, postJson(collector.uri("/v1/ingest"), KEYED));
            before = stats(collector);
        }
        assertEquals(new Stats(2, 4, 3), before);

        try (RunningCollector restarted = RunningCollector.start(dir)) {
            assertEquals(before, stats(restarted));
        }
    }

    @Test
    void aKeyedBatchSeenBeforeARestartIsADuplicateAfterIt() {
        try (RunningCollector collector = RunningCollector.start(dir)) {
            assertEquals(new Counts(2, 0, 1), ingest(collector, postJson(collector.uri("/v1/ingest"), KEYED)));
        }

        try (RunningCollector restarted = RunningCollector.start(dir)) {
            Counts again = ingest(restarted, postJson(restarted.uri("/v1/ingest"), KEYED));

            assertEquals(new Counts(0, 3, 0), again);
            assertEquals(new Stats(1, 2, 3), stats(restarted));
        }
    }

    @Test
    void aKeyGivenInTheHeaderBeforeARestartDeduplicatesAfterIt() {
        try (RunningCollector collector = RunningCollector.start(dir)) {
            ingest(collector, postJson(collector.uri("/v1/ingest"), "{\"events\":[{}]}")
                    .header("Idempotency-Key", "restart-header-key"));
        }

        try (RunningCollector restarted = RunningCollector.start(dir)) {
            Counts again = ingest(restarted, postJson(restarted.uri("/v1/ingest"), "{\"events\":[{}]}")
                    .header("Idempotency-Key", "restart-header-key"));

            assertEquals(new Counts(0, 1, 0), again);
        }
    }

    @Test
    void aStoppedCollectorReleasesItsPortAndAnotherCanListenOnIt() {
        int port;
        try (RunningCollector collector = RunningCollector.start(dir)) {
            port = collector.port();
        }

        try (RunningCollector again = RunningCollector.start(dir, Map.of("MCPD_LISTEN", "127.0.0.1:" + port))) {
            assertEquals(200, CollectorHttp.get(again.uri("/readyz")).statusCode());
        }
    }
}
