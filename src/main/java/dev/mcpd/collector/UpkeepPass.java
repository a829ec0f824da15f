package dev.mcpd.collector;

import dev.mcpd.config.DurationText;
import dev.mcpd.config.StoreUpkeep;
import dev.mcpd.logs.RootCause;
import dev.mcpd.store.Expiring;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.StoreLease;
import dev.mcpd.store.StoreLocation;
import dev.mcpd.store.StoreUnavailable;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of the collector's upkeep: take or renew the lease, and on the holder forget the keys older than
 * {@code --dedup-window} and delete the batches older than {@code --retention}, in paced chunks each fenced by the
 * lease, renewing it as the sweep goes.
 * Each change of this replica's lease is one log line: {@code lease taken}, {@code lease released},
 * {@code lease lost: …}. Closing it (a clean stop) releases the lease.
 */
public final class UpkeepPass implements Processor, AutoCloseable {

    /** What the last sweep on this replica did. */
    public record Sweep(Instant at, long keysForgotten, long batchesDeleted, long tookMillis) {
    }

    /**
     * How a sweep deletes on a store: {@code chunk} rows a transaction, then a pause {@code pausePerChunk} times as
     * long as the chunk took, so deleting holds the store at most a {@code 1 / (1 + pausePerChunk)} share of the time
     * however long the sweep runs, and a busy store (slower chunks) gets longer pauses.
     */
    record Pace(int chunk, int pausePerChunk) {

        /**
         * PostgreSQL: deleting does not keep ingest from writing, but shares its CPU and WAL; at a fifth of the time
         * a million keys go in about 35 s under ingest, by row address (bench/sweep.py). SQLite: ingest waits for
         * each chunk (one writer at a time), and keys are stored in key order, so keys first seen far apart each dirty
         * a page of their own: a chunk of 1 000 held the writer 30 to 35 ms, one of 100 about 1.5 ms (15 ms when its
         * commit checkpoints the WAL); back to back, they doubled ingest's p99 (bench/sweep.py). A tenth of the time
         * keeps that worst case within half of it; keys first seen close together share pages and go several times
         * faster (bench/key_sweep_pages.py).
         */
        static Pace on(StoreLocation.Dialect dialect) {
            return dialect == StoreLocation.Dialect.SQLITE ? new Pace(100, 9) : new Pace(1_000, 4);
        }
    }

    /** The longest pause between two chunks: a chunk slowed by a stalled store must not stall the sweep for long. */
    private static final long MAX_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
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
    /** Set by {@link #close()} before it waits for a pass in progress: a sweep stops at its next chunk. */
    private volatile boolean closed;

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
            sweep(() -> closed || exchange.getContext().isStopping());
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

    private void sweep(BooleanSupplier stopping) throws InterruptedException {
        long started = System.nanoTime();
        Swept keys;
        Swept batches = new Swept(0, false);
        try {
            long now = store.now(); // the store's clock: every replica counts ages alike, whatever its host's says
            keys = sweep(Expiring.KEYS, now - upkeep.dedupWindow().toMillis(), stopping);
            if (!keys.stopped() && upkeep.retention().isPresent()) {
                long cutoff = now - upkeep.retention().get().toMillis();
                batches = sweep(Expiring.BATCHES, cutoff, stopping);
                if (!batches.stopped()) {
                    batches = new Swept(batches.deleted(),
                            sweep(Expiring.COPIES, cutoff, stopping).stopped());
                }
            }
        } catch (StoreUnavailable e) {
            LOG.warn("upkeep sweep stopped: {}", e.getMessage());
            return;
        }
        long took = Duration.ofNanos(System.nanoTime() - started).toMillis();
        lastSweep = new Sweep(clock.instant(), keys.deleted(), batches.deleted(), took);
        if (keys.deleted() + batches.deleted() > 0) {
            LOG.info("upkeep sweep: {} idempotency keys older than {} forgotten, {} archived batches deleted, in {} ms",
                    keys.deleted(), DurationText.format(upkeep.dedupWindow()), batches.deleted(), took);
        }
    }

    /** How many rows a sweep of one table deleted, and whether it stopped before the last. */
    private record Swept(long deleted, boolean stopped) {
    }

    /**
     * Deletes chunk after chunk, paced ({@link Pace}), until none is left, the collector stops, or the lease is no
     * longer this replica's. It renews the lease whenever a pass has gone by since the last renewal: a sweep longer
     * than the lease's term keeps the lease rather than lose it to its own length.
     */
    private Swept sweep(Expiring what, long cutoffMillis, BooleanSupplier stopping)
            throws InterruptedException {
        Pace pace = Pace.on(store.location().dialect());
        long deleted = 0;
        while (!stopping.getAsBoolean()) {
            long chunkStarted = System.nanoTime();
            int done = store.deleteChunk(what, cutoffMillis, pace.chunk(), lease.fence());
            if (done < 0) {
                lost("it expired or another replica took it during the sweep");
                return new Swept(deleted, true);
            }
            deleted += done;
            if (done < pace.chunk()) {
                return new Swept(deleted, false);
            }
            long took = System.nanoTime() - chunkStarted;
            TimeUnit.NANOSECONDS.sleep(Math.min(took * pace.pausePerChunk(), MAX_PAUSE_NANOS));
            boolean renewalDue = System.nanoTime() - renewedAtNanos >= upkeep.leasePass().toNanos();
            if (renewalDue && (!renew() || !state.held())) {
                return new Swept(deleted, true);
            }
        }
        return new Swept(deleted, true);
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
    public void close() {
        closed = true;
        synchronized (this) {
            release();
        }
    }

    private void release() {
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
