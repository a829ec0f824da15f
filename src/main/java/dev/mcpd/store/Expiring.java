package dev.mcpd.store;

/** What a sweep deletes: the rows of one table older than a cutoff. */
public enum Expiring {
    /**
     * Idempotency keys first seen before the cutoff (on SQLite, in a minute before the cutoff's): a copy arriving
     * again is stored again.
     */
    KEYS(byRowAddress("idempotency_keys", "seen_at_ms"),
            // Whole minutes, each minute's keys in key order: keys first seen close together share pages. A key
            // is forgotten once its minute is older than the cutoff, within a minute of the key itself: a filter
            // on the exact time would look up every key of the cutoff's minute, chunk after chunk.
            "DELETE FROM idempotency_keys WHERE (sender, idempotency_key) IN (SELECT sender, idempotency_key"
            + " FROM idempotency_keys WHERE seen_at_ms / 60000 < ? / 60000"
            + " ORDER BY seen_at_ms / 60000, sender, idempotency_key LIMIT ?)"),
    /** Archived batches received before the cutoff. */
    BATCHES(byRowAddress("batches", "received_at_ms"),
            "DELETE FROM batches WHERE id IN (SELECT id FROM batches WHERE received_at_ms < ? LIMIT ?)"),
    /** The record of copies seen before the cutoff. */
    COPIES(byRowAddress("duplicates", "seen_at_ms"),
            "DELETE FROM duplicates WHERE id IN (SELECT id FROM duplicates WHERE seen_at_ms < ? LIMIT ?)");

    private final String delete;
    private final String deleteOnSqlite;

    Expiring(String delete, String deleteOnSqlite) {
        this.delete = delete;
        this.deleteOnSqlite = deleteOnSqlite;
    }

    /**
     * PostgreSQL: the chunk's rows found through the age index, in its order, and deleted by their row address
     * (ctid) — not looked up again through the primary key, whose pages (random ones, for keys) a chunk would
     * otherwise read in their hundreds. One statement, one snapshot: a row it found cannot be vacuumed away and
     * its address reused before the delete (rows of these tables are never updated either).
     */
    private static String byRowAddress(String table, String age) {
        return "DELETE FROM " + table + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + table + " WHERE " + age
                + " < ? ORDER BY " + age + " LIMIT ?))";
    }

    /** The statement, with the cutoff (epoch milliseconds) and the chunk's size to bind. */
    String sql(boolean sqlite) {
        return sqlite ? deleteOnSqlite : delete;
    }
}
