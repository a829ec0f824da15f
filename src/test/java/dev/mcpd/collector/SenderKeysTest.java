package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** On SQLite: an idempotency key is recognised per sender; a store made before that is migrated with its keys. */
class SenderKeysTest {

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector();

    @Test
    void twoSendersWithTheSameKeyKeepTheirBatchesAndASendersOtherBodyIsADuplicateCountedAsAConflict()
            throws Exception {
        SenderKeysScenario.run(URI.create(collector.running().baseUrl()));
    }

    @Test
    void aStoreFromBeforeKeysBelongedToSendersKeepsItsBatchesAndRecognisesTheirKeysFromAnySender(@TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("old.db");
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + file);
             Statement statement = connection.createStatement()) {
            SenderKeysScenario.createVersionOneStore(statement, "sqlite", "X'7B7D'");
        }
        try (RunningCollector upgraded = RunningCollector.startOn(file, Map.of())) {
            String copy = "{\"idempotency_key\":\"old-key\",\"events\":[{\"a\":1}]}";
            for (String credential : new String[] {"Bearer one", "Bearer two"}) {
                assertEquals(new CollectorHttp.Counts(0, 1, 0), CollectorHttp.ingest(upgraded,
                        CollectorHttp.postJson(upgraded.uri("/v1/ingest"), copy).header("Authorization", credential)),
                        "a key stored before the upgrade is a duplicate whoever sends it again");
            }
            assertEquals(new CollectorHttp.Counts(1, 0, 0), CollectorHttp.ingest(upgraded,
                    CollectorHttp.postJson(upgraded.uri("/v1/ingest"), "{\"idempotency_key\":\"new-key\","
                            + "\"events\":[{\"a\":1}]}")));
            assertEquals(new CollectorHttp.Stats(2, 2, 2), CollectorHttp.stats(upgraded), "the old batch is kept");
        }
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + file);
             Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT group_concat(version) FROM schema_version")) {
            rs.next();
            assertEquals("1,2,3", rs.getString(1));
        }
    }
}
