package dev.mcpd.store;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.SchemaStore;
import dev.mcpd.testing.ReliabilityReport;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The lease row on PostgreSQL between two replicas' leases, and on SQLite, where the one process always holds it. */
class StoreLeaseTest {

    private static final Duration TERM = Duration.ofSeconds(3);

    @RegisterExtension
    final SchemaStore pg = new SchemaStore("mcpd_lease_");

    @Test
    void oneReplicaHoldsItTheOtherTakesItOnceItIsReleased() throws Exception {
        StoreLease a = new StoreLease(pg.store(), "upkeep", "replica-a", TERM);
        StoreLease b = new StoreLease(pg.store(), "upkeep", "replica-b", TERM);
        StoreLease.State first = a.takeOrRenew();
        assertTrue(first.held());
        StoreLease.State other = b.takeOrRenew();
        assertFalse(other.held(), "the lease is A's");
        assertEquals(Optional.of("replica-a"), other.holder());
        assertTrue(a.takeOrRenew().held(), "the holder renews it");
        assertEquals(first.sinceMillis(), a.takeOrRenew().sinceMillis(), "renewing keeps the time it was taken");
        assertTrue(fenceHolds(a) && !fenceHolds(b));

        a.release();
        StoreLease.State taken = b.takeOrRenew();
        assertTrue(taken.held(), "released, it is free at once");
        assertFalse(a.takeOrRenew().held());
        assertTrue(!fenceHolds(a) && fenceHolds(b), "the former holder's fence now refuses");
    }

    @Test
    void aLeaseNotRenewedExpiresAfterItsTermAndAnotherTakesIt() throws Exception {
        StoreLease a = new StoreLease(pg.store(), "upkeep", "replica-a", TERM);
        StoreLease b = new StoreLease(pg.store(), "upkeep", "replica-b", TERM);
        long taken = System.nanoTime();
        assertTrue(a.takeOrRenew().held());
        assertFalse(b.takeOrRenew().held());
        await("A's lease expires").atMost(TERM.plusSeconds(2)).pollInterval(Duration.ofMillis(50))
                .until(() -> b.takeOrRenew().held());
        Duration waited = Duration.ofNanos(System.nanoTime() - taken);
        assertTrue(waited.compareTo(TERM) >= 0, "not before its term: " + waited.toMillis() + " ms");
        assertFalse(fenceHolds(a), "A, which did not renew in time, may no longer delete");
        assertFalse(a.takeOrRenew().held(), "nor take it back while B holds it");
    }

    @Test
    void aHolderFrozenInsideAFencedTransactionLosesItsLockAndTheOtherTakesTheLeaseInTime() throws Exception {
        Duration pass = Duration.ofSeconds(1);
        Duration term = pass.multipliedBy(3);
        try (JdbcStore holderStore = JdbcStore.open(StoreLocation.of(pg.postgres().url(pg.schema())),
                InstantSource.system(), Optional.of(pass))) {
            StoreLease a = new StoreLease(holderStore, "upkeep", "replica-a", term);
            StoreLease b = new StoreLease(pg.store(), "upkeep", "replica-b", term);
            assertTrue(a.takeOrRenew().held());
            Connection frozen = holderStore.connection();
            try {
                frozen.setAutoCommit(false);
                assertTrue(a.fence().stillHeld(frozen), "A locks the lease row to delete a chunk, then freezes");
                // B keeps trying at every look, as at every pass; each try waits on the row A locked. The server
                // ends A's idle transaction within a pass, and the lease, expired, is B's.
                long frozenAt = System.nanoTime();
                await("B takes the lease").atMost(term.plusSeconds(5)).pollInterval(Duration.ofMillis(100))
                        .until(() -> b.takeOrRenew().held());
                long tookMillis = (System.nanoTime() - frozenAt) / 1_000_000;
                boolean ended = !frozen.isValid(2);
                ReliabilityReport.assertHostile("a3-m2", "the lease holder freezes inside a sweep chunk's"
                                + " transaction, holding the lease row's lock (PostgreSQL; pass 1 s, term 3 s)",
                        "the server ends its session within a pass; another replica takes the lease within the"
                                + " term and a few seconds", "taken over after " + tookMillis + " ms; the frozen"
                                + " session " + (ended ? "ended by the server" : "STILL OPEN"),
                        ended && tookMillis <= term.plusSeconds(5).toMillis());
            } finally {
                try {
                    frozen.close();
                } catch (SQLException ended) {
                    // the pool's rollback on a session the server ended: what a thawed holder meets too
                }
            }
        }
    }

    @Test
    void onSqliteTheOneProcessAlwaysHoldsIt(@TempDir Path dir) throws Exception {
        try (JdbcStore sqlite = JdbcStore.open(StoreLocation.of(dir.resolve("mcpd.db").toString()))) {
            StoreLease lease = new StoreLease(sqlite, "upkeep", "only", TERM);
            assertTrue(lease.takeOrRenew().held());
            try (Connection connection = sqlite.connection()) {
                assertTrue(lease.fence().stillHeld(connection));
            }
        }
    }

    private boolean fenceHolds(StoreLease lease) throws Exception {
        try (Connection connection = pg.store().connection()) {
            connection.setAutoCommit(false);
            try {
                return lease.fence().stillHeld(connection);
            } finally {
                connection.rollback();
            }
        }
    }
}
