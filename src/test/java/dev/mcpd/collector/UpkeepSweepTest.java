package dev.mcpd.collector;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.StoreUpkeep;
import dev.mcpd.store.StoreLease;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A long sweep on PostgreSQL, where replicas share the lease: it keeps the lease however long it runs, and a stop
 * ends it at its next chunk.
 */
class UpkeepSweepTest {

    /** A one-second pass: the lease's term is three seconds, which a paced sweep of this many keys outlives. */
    private static final StoreUpkeep UPKEEP = new StoreUpkeep(Duration.ofSeconds(1), Duration.ofDays(1),
            Optional.empty());
    private static final int KEYS = 600_000;

    @RegisterExtension
    final SchemaStore pg = new SchemaStore("mcpd_sweep_");
    private final DefaultCamelContext camel = new DefaultCamelContext();

    @BeforeEach
    void aStoreFullOfExpiredKeys() throws Exception {
        long twoDaysAgo = System.currentTimeMillis() - Duration.ofDays(2).toMillis();
        TestPostgres postgres = pg.postgres();
        postgres.execute(pg.schema(), "INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms)"
                + " SELECT '', 'expired-' || i, md5(i::text), " + twoDaysAgo + " + i"
                + " FROM generate_series(1, " + KEYS + ") AS i");
        postgres.execute(pg.schema(), "ANALYZE idempotency_keys");
    }

    @Test
    void aSweepLongerThanTheLeasesTermRenewsTheLeaseAsItGoesAndNeverLosesIt() throws Exception {
        UpkeepPass holder = replica("replica-a");
        CompletableFuture<Void> pass = sweepOn(holder);
        await("replica A takes the lease").atMost(Duration.ofSeconds(10)).until(() -> holder.state().held());
        StoreLease other = new StoreLease(pg.store(), "upkeep", "replica-b", UPKEEP.leaseTerm());
        boolean otherEverHeld = false;
        while (!pass.isDone() && !otherEverHeld) {
            otherEverHeld = other.takeOrRenew().held();
            TimeUnit.MILLISECONDS.sleep(100);
        }
        pass.get(60, TimeUnit.SECONDS);
        assertFalse(otherEverHeld, "the other replica got the lease during the sweep");
        UpkeepPass.Sweep sweep = holder.lastSweep().orElseThrow();
        assertTrue(sweep.tookMillis() > UPKEEP.leaseTerm().toMillis(),
                "the sweep must outlive the lease's term for this test to say anything: " + sweep);
        assertEquals(KEYS, sweep.keysForgotten(), "one pass forgot every key");
        assertEquals(0, count(), "nothing expired is left");
        assertTrue(holder.state().held(), "the holder still holds it");
        holder.close();
    }

    @Test
    void aStopDuringASweepEndsItAtItsNextChunkAndReleasesTheLease() throws Exception {
        UpkeepPass holder = replica("replica-a");
        CompletableFuture<Void> pass = sweepOn(holder);
        await("the sweep has begun").atMost(Duration.ofSeconds(20)).until(() -> count() < KEYS);
        holder.close();
        pass.get(5, TimeUnit.SECONDS);
        assertTrue(count() > 0, "close() stopped the sweep before its last key, rather than wait for it");
        assertTrue(new StoreLease(pg.store(), "upkeep", "replica-b", UPKEEP.leaseTerm()).takeOrRenew().held(),
                "released: another replica takes it at once");
    }

    /** One upkeep pass of {@code replica}, on a thread of its own. */
    private CompletableFuture<Void> sweepOn(UpkeepPass replica) {
        return CompletableFuture.runAsync(() -> {
            try {
                replica.process(new DefaultExchange(camel));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private UpkeepPass replica(String id) {
        return new UpkeepPass(new StoreLease(pg.store(), "upkeep", id, UPKEEP.leaseTerm()), pg.store(), UPKEEP,
                new CollectorMetrics(new SimpleMeterRegistry()), InstantSource.system());
    }

    private long count() throws Exception {
        try (Connection connection = pg.postgres().connect(pg.schema());
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FROM idempotency_keys")) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
