package dev.mcpd.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

/**
 * The lease row in the shared store that says which replica does the work that runs once per store. Taking and
 * renewing are one upsert that succeeds only for the holder or when the lease has expired; every time is the store's
 * clock on PostgreSQL, so replicas' clocks need not agree. On an embedded SQLite file the one process always holds it.
 *
 * <p>Camel's {@code master:} component (a route started and stopped on leadership events of a
 * {@code CamelClusterService}) was not used: a leadership event arrives after the fact — a replica paused past its
 * lease resumes with its route still running — so every deletion must ask the lease inside its own transaction
 * anyway ({@link #fence()}), and the pass that renews the lease is the same clock that runs the sweep.
 */
public final class StoreLease {

    /** What this replica last read of the lease. */
    public record State(boolean held, Optional<String> holder, Optional<Long> sinceMillis, long expiresInMillis) {
    }

    private static final String POSTGRES_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

    private final JdbcStore store;
    private final String name;
    private final String replica;
    private final Duration term;
    private final boolean alwaysHeld;
    private final long startedMillis = System.currentTimeMillis();

    public StoreLease(JdbcStore store, String name, String replica, Duration term) {
        this.store = store;
        this.name = name;
        this.replica = replica;
        this.term = term;
        this.alwaysHeld = store.location().dialect() == StoreLocation.Dialect.SQLITE;
    }

    public String replica() {
        return replica;
    }

    public String name() {
        return name;
    }

    /** Takes the lease if it is free or expired, renews it if this replica holds it; says who holds it now. */
    public State takeOrRenew() throws SQLException {
        if (alwaysHeld) {
            return new State(true, Optional.of(replica), Optional.of(startedMillis), Long.MAX_VALUE);
        }
        try (Connection connection = store.connection()) {
            connection.setAutoCommit(false);
            try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO leases (name, holder, since_ms,"
                    + " renewed_at_ms, expires_at_ms) SELECT ?, ?, now_ms, now_ms, now_ms + ? FROM (SELECT "
                    + POSTGRES_NOW + " AS now_ms) AS clock"
                    + " ON CONFLICT (name) DO UPDATE SET since_ms = CASE WHEN leases.holder = EXCLUDED.holder"
                    + " AND leases.expires_at_ms > EXCLUDED.renewed_at_ms THEN leases.since_ms ELSE EXCLUDED.since_ms"
                    + " END, holder = EXCLUDED.holder, renewed_at_ms = EXCLUDED.renewed_at_ms,"
                    + " expires_at_ms = EXCLUDED.expires_at_ms"
                    + " WHERE leases.holder = EXCLUDED.holder OR leases.expires_at_ms <= EXCLUDED.renewed_at_ms");
                 PreparedStatement read = connection.prepareStatement("SELECT holder, since_ms, expires_at_ms - "
                         + POSTGRES_NOW + " FROM leases WHERE name = ?")) {
                upsert.setString(1, name);
                upsert.setString(2, replica);
                upsert.setLong(3, term.toMillis());
                upsert.executeUpdate();
                read.setString(1, name);
                State state;
                try (ResultSet rs = read.executeQuery()) {
                    rs.next();
                    String holder = rs.getString(1);
                    long remaining = rs.getLong(3);
                    state = new State(holder.equals(replica) && remaining > 0, Optional.of(holder),
                            Optional.of(rs.getLong(2)), remaining);
                }
                connection.commit();
                return state;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            }
        }
    }

    /** Gives the lease up (a clean stop): another replica takes it at its next pass. */
    public void release() throws SQLException {
        if (alwaysHeld) {
            return;
        }
        try (Connection connection = store.connection();
             PreparedStatement delete = connection.prepareStatement(
                     "DELETE FROM leases WHERE name = ? AND holder = ?")) {
            delete.setString(1, name);
            delete.setString(2, replica);
            delete.executeUpdate();
        }
    }

    /**
     * Asked inside each deletion's transaction: the row is locked until it ends, so the lease cannot change hands
     * while the chunk is deleted, and a replica whose lease expired (say, paused past it) deletes nothing.
     */
    public LeaseFence fence() {
        if (alwaysHeld) {
            return LeaseFence.ALWAYS;
        }
        return transaction -> {
            try (PreparedStatement select = transaction.prepareStatement("SELECT 1 FROM leases WHERE name = ? AND"
                    + " holder = ? AND expires_at_ms > " + POSTGRES_NOW + " FOR UPDATE")) {
                select.setString(1, name);
                select.setString(2, replica);
                try (ResultSet rs = select.executeQuery()) {
                    return rs.next();
                }
            }
        };
    }
}
