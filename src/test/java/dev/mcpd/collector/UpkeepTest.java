package dev.mcpd.collector;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpd.store.Batch;
import dev.mcpd.store.StoreLocation;
import dev.mcpd.store.StoreRows;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * On SQLite the one collector always holds the lease, and its upkeep forgets keys older than the dedup window and
 * deletes batches older than the retention — nothing younger.
 */
class UpkeepTest {

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector(Map.of("MCPD_LEASE_PASS_SECONDS", "1",
            "MCPD_DEDUP_WINDOW", "1h", "MCPD_RETENTION", "2h"));

    @Test
    void theOneProcessOnSqliteHoldsTheLeaseAndSaysSo() {
        JsonNode status = status();
        JsonNode lease = status.get("lease");
        assertTrue(lease.get("held").asBoolean(), status::toString);
        assertEquals(status.get("replica").asText(), lease.get("holder").asText(), status::toString);
        assertEquals("upkeep", lease.get("name").asText());
        assertTrue(lease.get("since").asText().endsWith("Z"), status::toString);
        String metrics = CollectorHttp.get(collector.uri("/metrics")).body();
        assertTrue(metrics.lines().anyMatch(line -> line.equals("mcpd_collector_lease_held 1.0")), metrics);
    }

    @Test
    void keysOlderThanTheWindowAreForgottenAndBatchesOlderThanTheRetentionDeletedNothingYounger() throws Exception {
        String recent = "{\"idempotency_key\":\"upkeep-recent\",\"events\":[{\"a\":1}]}";
        assertEquals(new CollectorHttp.Counts(1, 0, 0),
                CollectorHttp.ingest(collector, CollectorHttp.postJson(collector.uri("/v1/ingest"), recent)));
        long now = System.currentTimeMillis();
        try (Connection connection = connect()) {
            StoreRows.insertKey(connection, "upkeep-2h-old", now - Duration.ofMinutes(120).toMillis());
            StoreRows.insertKey(connection, "upkeep-50m-old", now - Duration.ofMinutes(50).toMillis());
            insertBatch(connection, "upkeep-3h-batch", now - Duration.ofHours(3).toMillis());
            insertBatch(connection, "upkeep-90m-batch", now - Duration.ofMinutes(90).toMillis());
        }
        await("a sweep forgets the old key").atMost(Duration.ofSeconds(20)).until(() -> !keyExists("upkeep-2h-old"));
        await("a sweep deletes the old batch").atMost(Duration.ofSeconds(20))
                .until(() -> count("SELECT count(*) FROM batches WHERE idempotency_key = 'upkeep-3h-batch'") == 0);
        assertTrue(keyExists("upkeep-50m-old"), "a key younger than the window stays");
        assertEquals(1, count("SELECT count(*) FROM batches WHERE idempotency_key = 'upkeep-90m-batch'"),
                "a batch younger than the retention stays");
        assertEquals(new CollectorHttp.Counts(0, 1, 0),
                CollectorHttp.ingest(collector, CollectorHttp.postJson(collector.uri("/v1/ingest"), recent)),
                "a re-send within the window is still recognised");
        JsonNode sweep = status().get("lastSweep");
        assertTrue(sweep.get("at").asText().endsWith("Z") && sweep.get("tookMillis").asLong() >= 0, sweep::toString);
    }

    @Test
    void aSweepGoesOnPastOneChunk() throws Exception {
        long old = System.currentTimeMillis() - Duration.ofHours(3).toMillis();
        try (Connection connection = connect()) {
            connection.setAutoCommit(false);
            for (int i = 0; i < UpkeepPass.Pace.on(StoreLocation.Dialect.SQLITE).chunk() * 5 / 2; i++) {
                StoreRows.insertKey(connection, "upkeep-chunked-" + i, old);
            }
            connection.commit();
        }
        await("a sweep forgets every old key, chunk after chunk").atMost(Duration.ofSeconds(20)).until(() ->
                count("SELECT count(*) FROM idempotency_keys WHERE idempotency_key LIKE 'upkeep-chunked-%'") == 0);
    }

    @Test
    void behindAnIngestKeyTheStatusPageAsksForIt(@TempDir Path dir) {
        try (RunningCollector keyed = RunningCollector.start(dir, Map.of("MCPD_INGEST_KEY", "status-key"))) {
            assertEquals(401, CollectorHttp.get(keyed.uri("/collector/status")).statusCode());
            var answer = CollectorHttp.send(HttpRequest.newBuilder(keyed.uri("/collector/status"))
                    .header("Authorization", "Bearer status-key").GET());
            assertEquals(200, answer.statusCode(), answer::body);
        }
    }

    private static JsonNode status() {
        var answer = CollectorHttp.get(collector.uri("/collector/status"));
        assertEquals(200, answer.statusCode(), answer::body);
        return CollectorHttp.parse(answer.body());
    }

    private static Connection connect() throws Exception {
        return DriverManager.getConnection("jdbc:sqlite:" + collector.dataFile());
    }

    private static void insertBatch(Connection connection, String key, long receivedAt) throws Exception {
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO batches (idempotency_key, target,"
                + " content_type, content_encoding, received_at_ms, events, rejected, body) VALUES (?, '/v1/ingest',"
                + " 'application/json', '', ?, 1, 0, X'7B7D')")) {
            insert.setString(1, key);
            insert.setLong(2, receivedAt);
            insert.executeUpdate();
        }
    }

    private static boolean keyExists(String key) throws Exception {
        return count("SELECT count(*) FROM idempotency_keys WHERE idempotency_key = '" + key + "'") == 1;
    }

    private static long count(String sql) throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
