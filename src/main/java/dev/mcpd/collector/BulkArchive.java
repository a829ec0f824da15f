package dev.mcpd.collector;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Archives the requests of one sender inside a transaction the caller commits, with one JDBC batch per table rather
 * than statements per request: the keys (each {@code ON CONFLICT DO NOTHING}, whose update count says whether the
 * key was new), then the batches that were new, then a record of each copy that was not. A key seen again with
 * another body is a duplicate all the same — the key is the sender's promise — marked as a conflict.
 */
final class BulkArchive {

    private final Connection transaction;
    private final Sender sender;
    private final long now;
    private final boolean legacyKeys;

    /**
     * @param legacyKeys whether keys stored before keys belonged to senders may remain: such a key makes a copy a
     *                   duplicate whoever sends it
     */
    BulkArchive(Connection transaction, Sender sender, long now, boolean legacyKeys) {
        this.transaction = transaction;
        this.sender = sender;
        this.now = now;
        this.legacyKeys = legacyKeys;
    }

    List<Archived> archive(List<Batch> batches) throws SQLException {
        int count = batches.size();
        String[] digests = new String[count];
        boolean[] duplicate = new boolean[count];
        for (int i = 0; i < count; i++) {
            if (batches.get(i).idempotencyKey().isPresent()) {
                digests[i] = HexFormat.of().formatHex(Sender.sha256(batches.get(i).body()));
                duplicate[i] = legacyKeys && storedBeforeSenders(batches.get(i).idempotencyKey().orElseThrow());
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
        List<Integer> inserted = new ArrayList<>();
        try (PreparedStatement keys = transaction.prepareStatement("INSERT INTO idempotency_keys (sender,"
                + " idempotency_key, body_sha256, seen_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
            for (int i = 0; i < batches.size(); i++) {
                if (digests[i] == null || duplicate[i]) {
                    continue;
                }
                keys.setString(1, sender.id());
                keys.setString(2, batches.get(i).idempotencyKey().orElseThrow());
                keys.setString(3, digests[i]);
                keys.setLong(4, now);
                keys.addBatch();
                inserted.add(i);
            }
            if (inserted.isEmpty()) {
                return;
            }
            int[] counts = executeBatch(keys);
            for (int j = 0; j < counts.length; j++) {
                if (counts[j] != 0 && counts[j] != 1) {
                    // A driver that rewrites batches answers SUCCESS_NO_INFO: which keys were new would be unknown.
                    throw new SQLException("the driver did not say which idempotency keys were new (" + counts[j]
                            + ")");
                }
                duplicate[inserted.get(j)] = counts[j] == 0;
            }
        }
    }

    private void storeNew(List<Batch> batches, boolean[] duplicate) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement(
                "INSERT INTO batches (idempotency_key, target, content_type, content_encoding, received_at_ms,"
                        + " events, rejected, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            boolean any = false;
            for (int i = 0; i < batches.size(); i++) {
                if (duplicate[i]) {
                    continue;
                }
                Batch batch = batches.get(i);
                insert.setString(1, batch.idempotencyKey().orElse(null));
                insert.setString(2, batch.target());
                insert.setString(3, batch.contentType());
                insert.setString(4, batch.contentEncoding());
                insert.setLong(5, batch.receivedAtMillis());
                insert.setInt(6, batch.events());
                insert.setInt(7, batch.rejected());
                insert.setBytes(8, batch.body());
                insert.addBatch();
                any = true;
            }
            if (any) {
                executeBatch(insert);
            }
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

    private boolean storedBeforeSenders(String key) throws SQLException {
        try (PreparedStatement select = transaction.prepareStatement(
                "SELECT 1 FROM idempotency_keys WHERE sender = ? AND idempotency_key = ?")) {
            select.setString(1, Sender.ANY);
            select.setString(2, key);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next();
            }
        }
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
