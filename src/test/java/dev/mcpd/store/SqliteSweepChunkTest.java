package dev.mcpd.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On SQLite a sweep's chunk commits without its own fsync — and gives its connection back to the pool with every
 * commit fsynced again, so no ingest commit after it is answered before it is on disk.
 */
class SqliteSweepChunkTest {

    /** SQLite's number for synchronous=FULL. */
    private static final int FULL = 2;

    @TempDir
    Path dir;

    @Test
    void everyConnectionIngestCanGetAfterAChunkStillSyncsEachCommit() throws Exception {
        try (JdbcStore store = JdbcStore.open(StoreLocation.of(dir.resolve("mcpd.db").toString()))) {
            try (Connection connection = store.connection();
                 PreparedStatement insert = connection.prepareStatement("INSERT INTO idempotency_keys (sender,"
                         + " idempotency_key, body_sha256, seen_at_ms) VALUES ('', ?, NULL, ?)")) {
                for (int i = 0; i < 30; i++) {
                    insert.setString(1, "key-" + i);
                    insert.setLong(2, i < 25 ? 60_000 : 9 * 60_000);
                    insert.executeUpdate();
                }
            }
            for (int chunk = 0; chunk < 3; chunk++) {
                store.deleteChunk(Expiring.KEYS, 5 * 60_000, 10, LeaseFence.ALWAYS);
            }
            List<Connection> all = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) { // the SQLite pool's size: the chunk's connection is one of them
                    all.add(store.connection());
                }
                for (Connection connection : all) {
                    assertEquals(FULL, synchronous(connection), "a pooled connection left unsynced by a sweep");
                }
                assertEquals(5, keys(all.get(0)), "the 25 expired keys went in three chunks, the 5 younger stay");
            } finally {
                for (Connection connection : all) {
                    connection.close();
                }
            }
        }
    }

    private static int synchronous(Connection connection) throws Exception {
        try (Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("PRAGMA synchronous")) {
            result.next();
            return result.getInt(1);
        }
    }

    private static long keys(Connection connection) throws Exception {
        try (Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery("SELECT COUNT(*) FROM idempotency_keys")) {
            result.next();
            return result.getLong(1);
        }
    }
}
