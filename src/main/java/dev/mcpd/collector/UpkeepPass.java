package dev.mcpd.collector;

import dev.mcpd.config.StoreUpkeep;
import dev.mcpd.logs.RootCause;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of the collector's upkeep: take or renew the lease, and on the holder forget the keys older than
 * {@code --dedup-window} and delete the batches older than {@code --retention}, in chunks each fenced by the lease.
 * Each change of this replica's lease is one log line: {@code lease taken}, {@code lease released},
 * {@code lease lost: …}. Closing it (a clean stop) releases the lease.
 */
public final class UpkeepPass implements Processor, AutoCloseable {

    /** What the last sweep on this replica did. */
    public record Sweep(Instant at, long keysForgotten, long batchesDeleted, long tookMillis) {
    }

    /** Rows one chunk deletes on PostgreSQL, where deleting does not keep ingest from writing. */
    static final int CHUNK = 1_000;
    /**
     * Rows one chunk deletes on SQLite, where ingest waits for each chunk (one writer at a time). Keys are stored in
     * key order, so nearly every key forgotten dirties a page of its own: a chunk of 1 000 held the writer 30 to
     * 35 ms, and with chunks back to back every ingest request waited for one (bench/sweep.py: 16 connections got
     * about half of their 1 000 requests/s answered). A chunk of 100 holds it about 1.5 ms, 15 ms when its commit
     * checkpoints the WAL (about one in eight).
     */
    static final int SQLITE_CHUNK = 100;
    private static final Logger LOG = LoggerFactory.getLogger(UpkeepPass.class);

    private final StoreLease lease;
    private final JdbcStore store;
    private final StoreUpkeep upkeep;
    private final CollectorMetrics metrics;
    private final InstantSource clock;

    private volatile StoreLease.State state = new StoreLease.State(false, Optional.empty(), Optional.empty(), 0);
    private volatile Sweep lastSweep;
    /** When the last renewal that found the lease held was sent (before the statement: never after the store's). */
    private volatile long renewedAtNanos;
    private boolean closed;

    UpkeepPass(StoreLease lease, JdbcStore store, StoreUpkeep upkeep, CollectorMetrics metrics, InstantSource clock) {
        this.lease = lease;
        this.store = store;
        this.upkeep = upkeep;
        this.metrics = metrics;
        this.clock = clock;
    }

    @Override
    public synchronized void process(Exchange exchange) throws InterruptedException {
        if (closed) {
            return;
        }
        if (!renew()) {
            return;
        }
        long remaining = state.expiresInMillis();
        if (!state.held() && remaining >= 0 && remaining < upkeep.leasePass().toMillis()) {
            // The holder stopped renewing just before its lease runs out: try again when it does, not a pass later,
            // so a takeover comes within three passes of the holder's death.
            TimeUnit.MILLISECONDS.sleep(remaining + 20);
            if (closed || !renew()) {
                return;
            }
        }
        if (state().held()) {
            sweep();
        }
    }

    /** Takes or renews the lease; false when the store did not answer. */
    private boolean renew() {
        StoreLease.State read;
        long asked = System.nanoTime();
        try {
            read = lease.takeOrRenew();
        } catch (SQLException | StoreUnavailable e) {
            if (state.held() && System.nanoTime() - renewedAtNanos > upkeep.leaseTerm().toNanos()) {
                lost("the store is not answering: " + RootCause.oneLine(e));
            }
            return false;
        }
        if (read.held()) {
            renewedAtNanos = asked;
            if (!state.held()) {
                LOG.info("lease taken: replica {} holds the {} lease, renewed every {} s", lease.replica(),
                        lease.name(), upkeep.leasePass().toSeconds());
            }
        } else if (state.held()) {
            LOG.warn("lease lost: another replica ({}) holds the {} lease", read.holder().orElse("?"), lease.name());
        }
        state = read;
        metrics.leaseHeld(read.held());
        return true;
    }

    private void lost(String reason) {
        LOG.warn("lease lost: {}; replica {} deletes nothing until it holds the {} lease again", reason,
                lease.replica(), lease.name());
        state = new StoreLease.State(false, state.holder(), state.sinceMillis(), 0);
        metrics.leaseHeld(false);
    }

    private void sweep() {
        long started = System.nanoTime();
        JdbcStore.Swept keys;
        JdbcStore.Swept batches = new JdbcStore.Swept(0, false);
        int chunk = store.location().dialect() == StoreLocation.Dialect.SQLITE ? SQLITE_CHUNK : CHUNK;
        try {
            keys = store.forgetKeysSeenBefore(clock.millis() - upkeep.dedupWindow().toMillis(), chunk, lease.fence());
            if (!keys.leaseLost() && upkeep.retention().isPresent()) {
                batches = store.deleteArchiveBefore(clock.millis() - upkeep.retention().get().toMillis(), chunk,
                        lease.fence());
            }
        } catch (StoreUnavailable e) {
            LOG.warn("upkeep sweep stopped: {}", e.getMessage());
            return;
        }
        long took = Duration.ofNanos(System.nanoTime() - started).toMillis();
        lastSweep = new Sweep(clock.instant(), keys.deleted(), batches.deleted(), took);
        if (keys.leaseLost() || batches.leaseLost()) {
            lost("it expired or another replica took it during the sweep");
        }
        if (keys.deleted() + batches.deleted() > 0) {
            LOG.info("upkeep sweep: {} idempotency keys older than {} forgotten, {} archived batches deleted, in {} ms",
                    keys.deleted(), dev.mcpd.config.DurationText.format(upkeep.dedupWindow()), batches.deleted(), took);
        }
    }

    /**
     * What this replica last read of the lease — but not held once a term has passed since its last renewal, even
     * before the next pass runs: a replica resumed after a pause (SIGSTOP, a long GC) must not report a lease that
     * has expired, nor act on it.
     */
    public StoreLease.State state() {
        StoreLease.State read = state;
        if (read.held() && read.expiresInMillis() != Long.MAX_VALUE
                && System.nanoTime() - renewedAtNanos > upkeep.leaseTerm().toNanos()) {
            return new StoreLease.State(false, read.holder(), read.sinceMillis(), 0);
        }
        return read;
    }

    public Optional<Sweep> lastSweep() {
        return Optional.ofNullable(lastSweep);
    }

    public String replica() {
        return lease.replica();
    }

    public String leaseName() {
        return lease.name();
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (!state.held()) {
            return;
        }
        try {
            lease.release();
            if (store.location().dialect() != StoreLocation.Dialect.SQLITE) {
                LOG.info("lease released: replica {} stopped; another takes the {} lease at its next pass",
                        lease.replica(), lease.name());
            }
        } catch (SQLException | StoreUnavailable e) {
            LOG.warn("lease not released ({}): another replica takes it once it expires", RootCause.oneLine(e));
        }
        state = new StoreLease.State(false, Optional.empty(), Optional.empty(), 0);
        metrics.leaseHeld(false);
    }
}
