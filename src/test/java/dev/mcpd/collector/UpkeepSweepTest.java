package dev.mcpd.collector;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.StoreUpkeep;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A long sweep on PostgreSQL, where replicas share the lease: it keeps the lease however long it runs, and a stop
 * ends it at its next chunk.
 */
class UpkeepSweepTest {

    /** A one-second pass: the lease's term is three seconds, which a paced sweep of this many keys outlives. */
    private static final StoreUpkeep UPKEEP = new StoreUpkeep(Duration.ofSeconds(1), Duration.ofDays(1),
            Optional.empty());
    private static final int KEYS = 600_000;

    private TestPostgres postgres;
    private String schema;
    private JdbcStore store;
    private final DefaultCamelContext camel = new DefaultCamelContext();

    @BeforeEach
    void aStoreFullOfExpiredKeys() throws Exception {
        postgres = TestPostgres.require();
        schema = "mcpd_sweep_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        postgres.execute(null, "CREATE SCHEMA " + schema);
        store = JdbcStore.open(StoreLocation.of(postgres.url() + (postgres.url().contains("?") ? "&" : "?")
                + "currentSchema=" + schema));
        long twoDaysAgo = System.currentTimeMillis() - Duration.ofDays(2).toMillis();
        postgres.execute(schema, "INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms)"
                + " SELECT '', 'expired-' || i, md5(i::text), " + twoDaysAgo + " + i"
                + " FROM generate_series(1, " + KEYS + ") AS i");
        postgres.execute(schema, "ANALYZE idempotency_keys");
    }

    @AfterEach
    void dropSchema() throws Exception {
        store.close();
        postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }

    @Test
    void aSweepLongerThanTheLeasesTermRenewsTheLeaseAsItGoesAndNeverLosesIt() throws Exception {
        UpkeepPass holder = replica("replica-a");
        CompletableFuture<Void> pass = sweepOn(holder);
        await("replica A takes the lease").atMost(Duration.ofSeconds(10)).until(() -> holder.state().held());
        StoreLease other = new StoreLease(store, "upkeep", "replica-b", UPKEEP.leaseTerm());
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
        assertTrue(new StoreLease(store, "upkeep", "replica-b", UPKEEP.leaseTerm()).takeOrRenew().held(),
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
        return new UpkeepPass(new StoreLease(store, "upkeep", id, UPKEEP.leaseTerm()), store, UPKEEP,
                new CollectorMetrics(new SimpleMeterRegistry()), InstantSource.system());
    }

    private long count() throws Exception {
        try (Connection connection = postgres.connect(schema); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FROM idempotency_keys")) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
