package dev.mcpd.store;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.InstantSource;

/**
 * The time the archive is stamped and expired by. On PostgreSQL it is the database server's: replicas on hosts whose
 * clocks disagree store and forget idempotency keys and batches by one clock, so a replica whose host runs days ahead
 * cannot forget a key another stored a second ago, nor keep one for ever. On an SQLite file it is the host's, the one
 * host that writes it.
 *
 * <p>The server's clock is not asked at every transaction: the difference between it and the host's is measured (the
 * middle of the host's readings around the query, within half a local round trip) when first needed and again every
 * {@link #REMEASURE_NANOS}, and added to the host's time. Until it could be measured (the server down since the
 * start) the host's time is used as it is.
 */
final class StoreClock implements InstantSource {

    /** How often the server's clock is asked again: clocks drift by milliseconds a day, NTP steps are rare. */
    static final long REMEASURE_NANOS = 60_000_000_000L;
    static final String POSTGRES_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

    private final InstantSource host;
    private final boolean server;
    private volatile long offsetMillis;
    private volatile long measuredAtNanos;
    private volatile boolean measured;

    private StoreClock(InstantSource host, boolean server) {
        this.host = host;
        this.server = server;
    }

    /** The host's clock, as it is: an SQLite file's. */
    static StoreClock host(InstantSource host) {
        return new StoreClock(host, false);
    }

    /** A database server's clock, told through {@code host}'s. */
    static StoreClock server(InstantSource host) {
        return new StoreClock(host, true);
    }

    /** The store's time now, asking the server on {@code connection} first when a measure is due. */
    long millis(Connection connection) throws SQLException {
        if (server && (!measured || System.nanoTime() - measuredAtNanos > REMEASURE_NANOS)) {
            measure(connection);
        }
        return millis();
    }

    /** How far the store's clock is ahead of the host's, in milliseconds (0 on SQLite, or before a measure). */
    long offsetMillis() {
        return offsetMillis;
    }

    /** The store's time by the last measure. */
    @Override
    public long millis() {
        return host.millis() + offsetMillis;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    private void measure(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            long before = host.millis();
            try (ResultSet rs = statement.executeQuery("SELECT " + POSTGRES_NOW)) {
                rs.next();
                long serverNow = rs.getLong(1);
                long after = host.millis();
                offsetMillis = serverNow - (before + (after - before) / 2);
            }
        }
        measuredAtNanos = System.nanoTime();
        measured = true;
    }
}
