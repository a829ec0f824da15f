package dev.mcpd.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Archives the requests of one sender inside a transaction the caller commits, with one statement or JDBC batch per
 * table rather than statements per request: the keys ({@code ON CONFLICT DO NOTHING}: a key it left alone marks its
 * copy a duplicate), then the batches that were new, then a record of each copy that was not. A key seen again with
 * another body is a duplicate all the same — the key is the sender's promise — marked as a conflict.
 *
 * <p>On PostgreSQL each table takes one {@code INSERT … SELECT FROM unnest(arrays)}: one statement for all the rows,
 * where a JDBC batch is a statement per row that the server parses, binds and executes on its own (a drain of relay
 * batches spent most of the store's time there). A single row goes as a plain statement, which costs the server less
 * than arrays of one. SQLite, in process, runs prepared-statement batches.
 */
final class BulkArchive {

    /** Keys per legacy lookup: well under SQLite's limit of bound parameters. */
    private static final int KEYS_PER_LOOKUP = 500;

    private final Connection transaction;
    private final Sender sender;
    private final long now;
    private final long hostToStoreMillis;
    private final boolean legacyKeys;
    private final boolean arrays;

    /**
     * @param now               the store's time (what keys and copies are stamped with)
     * @param hostToStoreMillis what turns a batch's receive time, read by this host's clock, into the store's
     * @param legacyKeys        whether keys stored before keys belonged to senders may remain: such a key makes a
     *                          copy a duplicate whoever sends it
     */
    BulkArchive(Connection transaction, StoreLocation.Dialect dialect, Sender sender, long now,
                long hostToStoreMillis, boolean legacyKeys) {
        this.transaction = transaction;
        this.arrays = dialect == StoreLocation.Dialect.POSTGRES;
        this.sender = sender;
        this.now = now;
        this.hostToStoreMillis = hostToStoreMillis;
        this.legacyKeys = legacyKeys;
    }

    List<Archived> archive(List<Batch> batches) throws SQLException {
        int count = batches.size();
        String[] digests = new String[count];
        boolean[] duplicate = new boolean[count];
        for (int i = 0; i < count; i++) {
            if (batches.get(i).idempotencyKey().isPresent()) {
                digests[i] = HexFormat.of().formatHex(Sender.sha256(batches.get(i).body()));
            }
        }
        if (legacyKeys) {
            Set<String> legacy = storedBeforeSenders(batches);
            for (int i = 0; i < count; i++) {
                duplicate[i] = digests[i] != null && legacy.contains(batches.get(i).idempotencyKey().orElseThrow());
            }
        }
        recordKeys(batches, digests, duplicate);
        storeNew(batches, duplicate);
        List<Archived> archived = new ArrayList<>(count);
        try (PreparedStatement seen = transaction.prepareStatement(
                "INSERT INTO duplicates (idempotency_key, events, seen_at_ms, conflict) VALUES (?, ?, ?, ?)")) {
            for (int i = 0; i < count; i++) {
                Batch batch = batches.get(i);
                if (!duplicate[i]) {
                    archived.add(Archived.stored(batch));
                    continue;
                }
                Archived copy = Archived.duplicateOf(batch, conflicts(batch.idempotencyKey().orElseThrow(), digests[i]));
                seen.setString(1, batch.idempotencyKey().orElseThrow());
                seen.setInt(2, copy.duplicate());
                seen.setLong(3, now);
                seen.setInt(4, copy.conflict() ? 1 : 0);
                seen.addBatch();
                archived.add(copy);
            }
            executeBatch(seen);
        }
        return archived;
    }

    /** Inserts the keys not already known; a key the insert left alone marks its batch a duplicate. */
    private void recordKeys(List<Batch> batches, String[] digests, boolean[] duplicate) throws SQLException {
        List<Integer> offered = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            if (digests[i] != null && !duplicate[i]) {
                offered.add(i);
            }
        }
        if (offered.isEmpty()) {
            return;
        }
        if (arrays && offered.size() > 1) {
            recordKeysAtOnce(batches, digests, duplicate, offered);
            return;
        }
        try (PreparedStatement keys = transaction.prepareStatement("INSERT INTO idempotency_keys (sender,"
                + " idempotency_key, body_sha256, seen_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
            for (int i : offered) {
                keys.setString(1, sender.id());
                keys.setString(2, batches.get(i).idempotencyKey().orElseThrow());
                keys.setString(3, digests[i]);
                keys.setLong(4, now);
                keys.addBatch();
            }
            int[] counts = executeBatch(keys);
            for (int j = 0; j < counts.length; j++) {
                if (counts[j] != 0 && counts[j] != 1) {
                    // A driver that rewrites batches answers SUCCESS_NO_INFO: which keys were new would be unknown.
                    throw new SQLException("the driver did not say which idempotency keys were new (" + counts[j]
                            + ")");
                }
                duplicate[offered.get(j)] = counts[j] == 0;
            }
        }
    }

    /**
     * The keys in one statement: it returns those it inserted. A key twice in the request is inserted once, so only
     * its first copy is new.
     */
    private void recordKeysAtOnce(List<Batch> batches, String[] digests, boolean[] duplicate, List<Integer> offered)
            throws SQLException {
        String[] keys = new String[offered.size()];
        String[] bodyDigests = new String[offered.size()];
        for (int j = 0; j < keys.length; j++) {
            keys[j] = batches.get(offered.get(j)).idempotencyKey().orElseThrow();
            bodyDigests[j] = digests[offered.get(j)];
        }
        Set<String> inserted = new HashSet<>();
        try (PreparedStatement insert = transaction.prepareStatement("INSERT INTO idempotency_keys (sender,"
                + " idempotency_key, body_sha256, seen_at_ms) SELECT ?, k.key, k.digest, ?"
                + " FROM unnest(?::text[], ?::text[]) AS k(key, digest) ON CONFLICT DO NOTHING"
                + " RETURNING idempotency_key")) {
            insert.setString(1, sender.id());
            insert.setLong(2, now);
            insert.setArray(3, transaction.createArrayOf("text", keys));
            insert.setArray(4, transaction.createArrayOf("text", bodyDigests));
            try (ResultSet rs = insert.executeQuery()) {
                while (rs.next()) {
                    inserted.add(rs.getString(1));
                }
            }
        }
        for (int j = 0; j < keys.length; j++) {
            duplicate[offered.get(j)] = !inserted.remove(keys[j]);
        }
    }

    private void storeNew(List<Batch> batches, boolean[] duplicate) throws SQLException {
        List<Batch> fresh = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            if (!duplicate[i]) {
                fresh.add(batches.get(i));
            }
        }
        if (fresh.isEmpty()) {
            return;
        }
        if (arrays && fresh.size() > 1) {
            storeNewAtOnce(fresh);
            return;
        }
        try (PreparedStatement insert = transaction.prepareStatement(
                "INSERT INTO batches (idempotency_key, target, content_type, content_encoding, received_at_ms,"
                        + " events, rejected, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            for (Batch batch : fresh) {
                insert.setString(1, batch.idempotencyKey().orElse(null));
                insert.setString(2, batch.target());
                insert.setString(3, batch.contentType());
                insert.setString(4, batch.contentEncoding());
                insert.setLong(5, batch.receivedAtMillis() + hostToStoreMillis);
                insert.setInt(6, batch.events());
                insert.setInt(7, batch.rejected());
                insert.setBytes(8, batch.body());
                insert.addBatch();
            }
            executeBatch(insert);
        }
    }

    private void storeNewAtOnce(List<Batch> fresh) throws SQLException {
        int n = fresh.size();
        String[] keys = new String[n];
        String[] targets = new String[n];
        String[] contentTypes = new String[n];
        String[] contentEncodings = new String[n];
        Long[] receivedAt = new Long[n];
        Integer[] events = new Integer[n];
        Integer[] rejected = new Integer[n];
        byte[][] bodies = new byte[n][];
        for (int i = 0; i < n; i++) {
            Batch batch = fresh.get(i);
            keys[i] = batch.idempotencyKey().orElse(null);
            targets[i] = batch.target();
            contentTypes[i] = batch.contentType();
            contentEncodings[i] = batch.contentEncoding();
            receivedAt[i] = batch.receivedAtMillis() + hostToStoreMillis;
            events[i] = batch.events();
            rejected[i] = batch.rejected();
            bodies[i] = batch.body();
        }
        try (PreparedStatement insert = transaction.prepareStatement(
                "INSERT INTO batches (idempotency_key, target, content_type, content_encoding, received_at_ms,"
                        + " events, rejected, body) SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[],"
                        + " ?::bigint[], ?::integer[], ?::integer[], ?::bytea[])")) {
            insert.setArray(1, transaction.createArrayOf("text", keys));
            insert.setArray(2, transaction.createArrayOf("text", targets));
            insert.setArray(3, transaction.createArrayOf("text", contentTypes));
            insert.setArray(4, transaction.createArrayOf("text", contentEncodings));
            insert.setArray(5, transaction.createArrayOf("bigint", receivedAt));
            insert.setArray(6, transaction.createArrayOf("integer", events));
            insert.setArray(7, transaction.createArrayOf("integer", rejected));
            insert.setObject(8, bodies); // pgjdbc sends byte[][] as bytea[]
            insert.executeUpdate();
        }
    }

    /**
     * pgjdbc, run with assertions on, fails an assertion instead of throwing when the server closed the connection
     * during a batch: that is the store not answering, like any other lost connection.
     */
    private static int[] executeBatch(PreparedStatement statement) throws SQLException {
        try {
            return statement.executeBatch();
        } catch (AssertionError e) {
            throw new SQLException("the connection to the store was lost during a batch", e);
        }
    }

    /** Which of the request's keys were stored before keys belonged to senders: one query per few hundred keys. */
    private Set<String> storedBeforeSenders(List<Batch> batches) throws SQLException {
        List<String> keys = batches.stream().flatMap(batch -> batch.idempotencyKey().stream()).distinct().toList();
        Set<String> found = new HashSet<>();
        for (int from = 0; from < keys.size(); from += KEYS_PER_LOOKUP) {
            List<String> chunk = keys.subList(from, Math.min(keys.size(), from + KEYS_PER_LOOKUP));
            try (PreparedStatement select = transaction.prepareStatement("SELECT idempotency_key FROM idempotency_keys"
                    + " WHERE sender = ? AND idempotency_key IN (" + "?, ".repeat(chunk.size() - 1) + "?)")) {
                select.setString(1, Sender.ANY);
                for (int i = 0; i < chunk.size(); i++) {
                    select.setString(i + 2, chunk.get(i));
                }
                try (ResultSet rs = select.executeQuery()) {
                    while (rs.next()) {
                        found.add(rs.getString(1));
                    }
                }
            }
        }
        return found;
    }

    /** Whether the key was stored with another body (a key from before bodies were recorded never conflicts). */
    private boolean conflicts(String key, String digest) throws SQLException {
        try (PreparedStatement select = transaction.prepareStatement(
                "SELECT body_sha256 FROM idempotency_keys WHERE sender = ? AND idempotency_key = ?")) {
            select.setString(1, sender.id());
            select.setString(2, key);
            try (ResultSet rs = select.executeQuery()) {
                String stored = rs.next() ? rs.getString(1) : null;
                return stored != null && !Objects.equals(stored, digest);
            }
        }
    }
}
