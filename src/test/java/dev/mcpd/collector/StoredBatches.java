package dev.mcpd.collector;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What the collector's SQLite file holds, read with plain JDBC beside the running collector. */
public final class StoredBatches {

    /** One row of {@code batches}; {@code receivedAtMillis} is its {@code received_at_ms}. */
    public record Row(Optional<String> idempotencyKey, String target, String contentType, String contentEncoding,
               int events, int rejected, byte[] body, long receivedAtMillis) {
    }

    private StoredBatches() {
    }

    /** Every stored batch whose target is exactly {@code target}, oldest first. */
    public static List<Row> withTarget(Path dataFile, String target) {
        return query(dataFile, "WHERE target = ?", target);
    }

    /** The stored batch with this idempotency key, if any. */
    public static Optional<Row> withKey(Path dataFile, String key) {
        List<Row> rows = query(dataFile, "WHERE idempotency_key = ?", key);
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
    }

    /** How many stored batches each idempotency key has (a key stored twice would show 2). */
    public static Map<String, Integer> countsByKey(Path dataFile) {
        Map<String, Integer> counts = new HashMap<>();
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + dataFile.toAbsolutePath());
             PreparedStatement select = connection.prepareStatement("SELECT idempotency_key, count(*) FROM batches"
                     + " GROUP BY idempotency_key");
             ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getInt(2));
            }
            return counts;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read " + dataFile, e);
        }
    }

    private static List<Row> query(Path dataFile, String where, String value) {
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + dataFile.toAbsolutePath());
             PreparedStatement select = connection.prepareStatement("SELECT idempotency_key, target, content_type,"
                     + " content_encoding, events, rejected, body, received_at_ms FROM batches " + where
                     + " ORDER BY id")) {
            select.setString(1, value);
            List<Row> rows = new ArrayList<>();
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    rows.add(new Row(Optional.ofNullable(rs.getString(1)), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getInt(5), rs.getInt(6), rs.getBytes(7), rs.getLong(8)));
                }
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read " + dataFile, e);
        }
    }
}
