package dev.mcpd.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.mcpd.disk.DurableDirectories;
import dev.mcpd.logs.RootCause;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The collector's archive on SQLite or PostgreSQL, through a pooled JDBC connection.
 *
 * <p>A batch's idempotency key is recorded, for its {@link Sender}, in the same transaction as the batch
 * ({@link BulkArchive}): the key's insert is {@code ON CONFLICT DO NOTHING}, so the database's primary key — not a
 * check before the insert — decides which copy is stored. Two replicas racing on the same key store it once; the
 * loser records its copy as a duplicate. (Camel's idempotent consumer with a JDBC repository would record the key in
 * a statement of its own, outside the batch's transaction: a crash between the two would lose the batch or the key.)
 * Keys are forgotten after the dedup window, batches after the retention, by the lease holder
 * ({@link #deleteChunk}).
 *
 * <p>The schema is created and migrated at start by the versioned scripts under {@code db/<dialect>/}
 * ({@code V1__….sql}, …), applied in order in one transaction and recorded in {@code schema_version}; on PostgreSQL
 * an advisory lock keeps replicas that start together from migrating twice.
 */
public final class JdbcStore implements AutoCloseable {

    /** The migrations, in order. A new one is appended here and shipped as db/<dialect>/V<n>__<name>.sql. */
    static final String[] MIGRATIONS = {"V1__archive.sql", "V2__keys_per_sender_and_lease.sql",
        "V3__keys_by_minute.sql"};
    private static final long MIGRATION_LOCK = 0x6d637064L; // "mcpd"

    private final StoreLocation location;
    private final HikariDataSource pool;
    /**
     * SQLite takes one writer at a time; a waiting writer there sleeps in growing steps (busy_timeout), which put
     * seconds into the p99 under load. Writers queue here instead, fairly, and each finds the database free.
     */
    private final ReentrantLock sqliteWriter = new ReentrantLock(true);

    /** SQLite: whether the file at the store's path is still the one it opened; null on PostgreSQL. */
    private final SqliteFileWatch sqliteFile;

    /** The archive's clock: the database server's on PostgreSQL, so that replicas agree on ages. */
    private final StoreClock clock;
    /** Whether keys stored before keys belonged to senders may remain (see {@link #legacyKeys()}). */
    private volatile boolean legacyKeys = true;
    private volatile long nextLegacyCheck;

    private JdbcStore(StoreLocation location, HikariDataSource pool, InstantSource clock) {
        this.location = location;
        this.pool = pool;
        this.clock = location.dialect() == StoreLocation.Dialect.POSTGRES ? StoreClock.server(clock)
                : StoreClock.host(clock);
        this.sqliteFile = location.file().map(file -> new SqliteFileWatch(file,
                () -> pool.getHikariPoolMXBean().softEvictConnections())).orElse(null);
    }

    /** Connects (creating the SQLite file and its folder if needed) and brings the schema up to date. */
    public static JdbcStore open(StoreLocation location) {
        return open(location, InstantSource.system());
    }

    /** As {@link #open(StoreLocation)}, with the clock duplicates are stamped by. */
    public static JdbcStore open(StoreLocation location, InstantSource clock) {
        return open(location, clock, Optional.empty());
    }

    /**
     * As {@link #open(StoreLocation, InstantSource)}; on PostgreSQL the server ends any of this store's sessions
     * that sits idle inside a transaction for longer than {@code idleInTransaction}. A replica frozen (paused, its
     * host stalled) inside a deletion's transaction holds the lease row locked: without it, no other replica could
     * take the lease for as long as the freeze lasted. None of the store's own transactions waits between statements.
     */
    public static JdbcStore open(StoreLocation location, InstantSource clock, Optional<Duration> idleInTransaction) {
        if (location.file().isPresent()) {
            try {
                DurableDirectories.create(location.file().get().toAbsolutePath().getParent());
            } catch (IOException e) {
                throw new StoreUnavailable("cannot create the folder of " + location.file().get() + ": "
                        + e.getMessage(), e);
            }
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(location.jdbcUrl());
        location.user().ifPresent(config::setUsername);
        location.password().ifPresent(config::setPassword);
        config.setPoolName("mcpd-store");
        config.setMaximumPoolSize(location.dialect() == StoreLocation.Dialect.SQLITE ? 4 : 16);
        // A store that does not answer within seconds is reported (503, /readyz) rather than waited for.
        config.setConnectionTimeout(2_000);
        config.setValidationTimeout(2_000);
        config.setInitializationFailTimeout(-1); // start even if the store is down; /readyz tells
        if (location.dialect() == StoreLocation.Dialect.POSTGRES) {
            idleInTransaction.ifPresent(limit -> config.setConnectionInitSql(
                    "SET idle_in_transaction_session_timeout = " + Math.max(1, limit.toMillis())));
        }
        HikariDataSource pool = new HikariDataSource(config);
        JdbcStore store = new JdbcStore(location, pool, clock);
        try {
            store.migrate();
            if (location.file().isPresent()) {
                store.sqliteFile.opened();
                // SQLite syncs the directory when it makes a journal or WAL, not when it makes the database file
                // itself: its name is made durable here, once, before the first 2xx can depend on it.
                DurableDirectories.sync(location.file().get().toAbsolutePath().getParent());
            }
        } catch (SQLException | IOException | RuntimeException e) {
            pool.close();
            throw new StoreUnavailable("cannot prepare the store " + location.describe() + ": "
                    + RootCause.oneLine(e), e);
        }
        return store;
    }

    public StoreLocation location() {
        return location;
    }

    private void migrate() throws SQLException {
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                if (location.dialect() == StoreLocation.Dialect.POSTGRES) {
                    statement.execute("SELECT pg_advisory_xact_lock(" + MIGRATION_LOCK + ")");
                }
                statement.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
                int current = 0;
                try (ResultSet rs = statement.executeQuery("SELECT COALESCE(MAX(version), 0) FROM schema_version")) {
                    if (rs.next()) {
                        current = rs.getInt(1);
                    }
                }
                for (int version = current + 1; version <= MIGRATIONS.length; version++) {
                    for (String sql : script(MIGRATIONS[version - 1]).split(";")) {
                        if (!sql.lines().allMatch(line -> line.isBlank() || line.strip().startsWith("--"))) {
                            statement.execute(sql);
                        }
                    }
                    statement.execute("INSERT INTO schema_version (version) VALUES (" + version + ")");
                }
            }
            connection.commit();
        }
    }

    private String script(String name) {
        String path = "/db/" + location.dialect().name().toLowerCase(Locale.ROOT) + "/" + name;
        try (InputStream in = JdbcStore.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("migration " + path + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read migration " + path, e);
        }
    }

    /**
     * Stores the batch unless its key was seen before, in one transaction; says which it was.
     *
     * <p>SQLite: a commit counts only if it went to the file the next start opens. A connection keeps writing into a
     * database file that was deleted (or whose folder was) and answers "committed": so after every commit the file at
     * the store's path must still be the one the store opened, else the sender is told 503 and readiness says why.
     * Once a file is there again, the store migrates it (a new, empty archive) and takes requests again.
     */
    public Archived archive(Sender sender, Batch batch) {
        return archiveAll(sender, List.of(batch)).get(0);
    }

    /**
     * Archives several requests of one sender in one transaction — the entries of one relay batch — each
     * deduplicated by its own key: all are kept, or none (then {@link StoreUnavailable}).
     *
     * @return what happened to each, in order
     */
    public List<Archived> archiveAll(Sender sender, List<Batch> batches) {
        if (location.dialect() != StoreLocation.Dialect.SQLITE) {
            return archiveInTransaction(sender, batches);
        }
        sqliteWriter.lock();
        try {
            sqliteFile.reopenIfLost(this::migrate);
            List<Archived> archived;
            try {
                archived = archiveInTransaction(sender, batches);
            } catch (StoreUnavailable e) {
                sqliteFile.changed();
                throw e;
            }
            if (sqliteFile.changed()) {
                throw new StoreUnavailable(sqliteFile.lost() + "; the batch was not kept", null);
            }
            return archived;
        } finally {
            sqliteWriter.unlock();
        }
    }

    private List<Archived> archiveInTransaction(Sender sender, List<Batch> batches) {
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            try {
                List<Archived> archived = new BulkArchive(connection, location.dialect(), sender,
                        clock.millis(connection), clock.offsetMillis(), legacyKeys())
                        .archive(batches);
                connection.commit();
                return archived;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreUnavailable("the store " + location.describe() + " failed: " + RootCause.oneLine(e), e);
        }
    }

    /**
     * Whether keys from before keys belonged to senders may still be there: checked at most once a minute, so that
     * once the dedup window has forgotten them, archiving stops looking for them.
     */
    private boolean legacyKeys() {
        long now = clock.millis();
        if (legacyKeys && now >= nextLegacyCheck) {
            nextLegacyCheck = now + 60_000;
            try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
                 ResultSet rs = statement.executeQuery("SELECT 1 FROM idempotency_keys WHERE sender = '"
                         + Sender.ANY + "' LIMIT 1")) {
                legacyKeys = rs.next();
            } catch (SQLException e) {
                return true; // asked again when the store answers
            }
        }
        return legacyKeys;
    }

    /**
     * The archive's time now — what keys and batches are stamped with, and their ages counted from: on PostgreSQL the
     * server's clock (asked on a connection of its own when a measure is due), else the host's.
     */
    public long now() {
        if (location.dialect() == StoreLocation.Dialect.SQLITE) {
            return clock.millis();
        }
        try (Connection connection = pool.getConnection()) {
            return clock.millis(connection);
        } catch (SQLException e) {
            throw new StoreUnavailable("the store " + location.describe() + " failed: " + RootCause.oneLine(e), e);
        }
    }

    /**
     * Deletes at most {@code chunk} rows of {@code what} older than {@code cutoffMillis}, in one short transaction
     * that first asks the fence: ingest waits at most one chunk (on SQLite, writers queue fairly behind it), and a
     * replica that lost the lease deletes nothing. Answers how many rows went, or -1 when the fence said no.
     */
    public int deleteChunk(Expiring what, long cutoffMillis, int chunk, LeaseFence fence) {
        boolean sqlite = location.dialect() == StoreLocation.Dialect.SQLITE;
        if (sqlite) {
            sqliteWriter.lock();
        }
        try (Connection connection = pool.getConnection()) {
            if (sqlite) {
                synchronous(connection, "NORMAL");
            }
            try {
                connection.setAutoCommit(false);
                try (PreparedStatement statement = connection.prepareStatement(what.sql(sqlite))) {
                    if (!fence.stillHeld(connection)) {
                        connection.rollback();
                        return -1;
                    }
                    statement.setLong(1, cutoffMillis);
                    statement.setInt(2, chunk);
                    int done = statement.executeUpdate();
                    connection.commit();
                    return done;
                } catch (SQLException | RuntimeException e) {
                    connection.rollback();
                    throw e;
                }
            } finally {
                if (sqlite) {
                    connection.setAutoCommit(true);
                    synchronous(connection, "FULL");
                }
            }
        } catch (SQLException e) {
            throw new StoreUnavailable("the store " + location.describe() + " failed: " + RootCause.oneLine(e), e);
        } finally {
            if (sqlite) {
                sqliteWriter.unlock();
            }
        }
    }

    /**
     * SQLite: whether a commit on this connection waits for its fsync. A sweep's chunk does not: deleting what expired
     * needs no durability (a chunk a power cut takes back is deleted again by the next sweep, and the next ingest
     * commit syncs the log with the chunk in it), and without its own fsync a chunk holds the store's one writer
     * for the delete alone. The connection goes back to the pool as it came, every commit fsynced.
     */
    private static void synchronous(Connection connection, String level) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("PRAGMA synchronous=" + level);
        }
    }

    /** A connection from the store's pool, for the lease: the caller closes it. */
    Connection connection() throws SQLException {
        return pool.getConnection();
    }

    public StoreStats stats() {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            long batches;
            long events;
            long duplicates;
            try (ResultSet rs = statement.executeQuery("SELECT COUNT(*), COALESCE(SUM(events), 0) FROM batches")) {
                rs.next();
                batches = rs.getLong(1);
                events = rs.getLong(2);
            }
            long conflicts;
            try (ResultSet rs = statement.executeQuery("SELECT COALESCE(SUM(events), 0), COALESCE(SUM(conflict), 0)"
                    + " FROM duplicates")) {
                rs.next();
                duplicates = rs.getLong(1);
                conflicts = rs.getLong(2);
            }
            return new StoreStats(batches, events, duplicates, conflicts);
        } catch (SQLException e) {
            throw new StoreUnavailable("the store " + location.describe() + " failed: " + e.getMessage(), e);
        }
    }

    /** Whether the store answers a trivial query within {@code timeout}; the reason when it does not. */
    public Optional<String> problem(Duration timeout) {
        // Busy writers check the file after each commit themselves; an idle store is checked here.
        if (location.dialect() == StoreLocation.Dialect.SQLITE && sqliteWriter.tryLock()) {
            try {
                if (sqliteFile.changed()) {
                    sqliteFile.reopenIfLost(this::migrate);
                }
            } catch (StoreUnavailable e) {
                return Optional.of(e.getMessage());
            } finally {
                sqliteWriter.unlock();
            }
        }
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.setQueryTimeout((int) Math.max(1, timeout.toSeconds()));
            statement.execute("SELECT 1");
            return Optional.empty();
        } catch (SQLException e) {
            return Optional.of(RootCause.oneLine(e));
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
