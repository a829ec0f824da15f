package dev.mcpd.store;

import java.sql.Connection;
import java.sql.PreparedStatement;

/** Rows written straight into a store's tables, for tests of what the store does with old ones. */
public final class StoreRows {

    private StoreRows() {
    }

    /** An idempotency key of no sender, first seen at {@code seenAt}. */
    public static void insertKey(Connection connection, String key, long seenAt) throws Exception {
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO idempotency_keys (sender,"
                + " idempotency_key, body_sha256, seen_at_ms) VALUES ('', ?, NULL, ?)")) {
            insert.setString(1, key);
            insert.setLong(2, seenAt);
            insert.executeUpdate();
        }
    }
}
