package dev.mcpd.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On SQLite a sweep forgets keys a whole minute at a time, each minute's keys in key order — the order of the table
 * itself, so keys first seen close together are deleted a page at a time — and never a key younger than the cutoff.
 */
class SqliteKeySweepTest {

    private static final long MINUTE = 60_000;
    /** A minute's start, and a cutoff half-way through it. */
    private static final long BOUNDARY_MINUTE = 1_000 * MINUTE;
    private static final long CUTOFF = BOUNDARY_MINUTE + 30_000;

    @TempDir
    Path dir;

    @Test
    void aChunkTakesTheOldestMinuteFirstAndItsKeysInKeyOrder() throws Exception {
        try (JdbcStore store = JdbcStore.open(StoreLocation.of(dir.resolve("mcpd.db").toString()))) {
            try (Connection connection = store.connection()) {
                // The oldest minute's key sorts last; within the next minute, key order is not age order.
                StoreRows.insertKey(connection, "k-4", BOUNDARY_MINUTE - MINUTE + 5);
                StoreRows.insertKey(connection, "k-2", BOUNDARY_MINUTE - MINUTE + 59_000);
                StoreRows.insertKey(connection, "k-9", BOUNDARY_MINUTE - 2 * MINUTE + 30_000);
                StoreRows.insertKey(connection, "k-3", BOUNDARY_MINUTE - MINUTE + 1);
            }
            assertEquals(1, store.deleteChunk(Expiring.KEYS, CUTOFF, 1, LeaseFence.ALWAYS));
            assertEquals(List.of("k-2", "k-3", "k-4"), keys(store), "the oldest minute goes first");
            assertEquals(2, store.deleteChunk(Expiring.KEYS, CUTOFF, 2, LeaseFence.ALWAYS));
            assertEquals(List.of("k-4"), keys(store), "within a minute, the keys go in key order, not by age");
        }
    }

    @Test
    void aKeyGoesOnceItsWholeMinuteIsOlderThanTheCutoffAndNoYoungerKeyEver() throws Exception {
        try (JdbcStore store = JdbcStore.open(StoreLocation.of(dir.resolve("mcpd.db").toString()))) {
            try (Connection connection = store.connection()) {
                StoreRows.insertKey(connection, "a-last-of-the-minute-before", BOUNDARY_MINUTE - 1);
                StoreRows.insertKey(connection, "b-older-in-the-cutoffs-minute", BOUNDARY_MINUTE);
                StoreRows.insertKey(connection, "c-younger", CUTOFF);
                StoreRows.insertKey(connection, "d-next-minute", BOUNDARY_MINUTE + MINUTE);
            }
            assertEquals(1, store.deleteChunk(Expiring.KEYS, CUTOFF, 10, LeaseFence.ALWAYS));
            assertEquals(List.of("b-older-in-the-cutoffs-minute", "c-younger", "d-next-minute"), keys(store),
                    "a key older than the cutoff but in its minute waits for the minute to pass");
            assertEquals(2, store.deleteChunk(Expiring.KEYS, BOUNDARY_MINUTE + MINUTE, 10,
                    LeaseFence.ALWAYS));
            assertEquals(List.of("d-next-minute"), keys(store));
        }
    }

    @Test
    void theChunkFindsItsKeysInTheMinuteIndexAloneWithoutSortingOrScanningTheTable() throws Exception {
        try (JdbcStore store = JdbcStore.open(StoreLocation.of(dir.resolve("mcpd.db").toString()));
             Connection connection = store.connection();
             PreparedStatement explain = connection.prepareStatement("EXPLAIN QUERY PLAN "
                     + Expiring.KEYS.sql(true))) {
            explain.setLong(1, CUTOFF);
            explain.setInt(2, 100);
            List<String> plan = new ArrayList<>();
            try (ResultSet rs = explain.executeQuery()) {
                while (rs.next()) {
                    plan.add(rs.getString("detail"));
                }
            }
            assertTrue(plan.stream().anyMatch(step -> step.contains("USING COVERING INDEX idempotency_keys_by_minute")), ""
                    + plan);
            assertTrue(plan.stream().noneMatch(step -> step.startsWith("SCAN") || step.contains("TEMP B-TREE")),
                    "" + plan);
        }
    }

    private static List<String> keys(JdbcStore store) throws Exception {
        List<String> keys = new ArrayList<>();
        try (Connection connection = store.connection();
             ResultSet rs = connection.createStatement().executeQuery(
                     "SELECT idempotency_key FROM idempotency_keys ORDER BY idempotency_key")) {
            while (rs.next()) {
                keys.add(rs.getString(1));
            }
        }
        return keys;
    }
}
