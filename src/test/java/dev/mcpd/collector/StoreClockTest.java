package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.StoreUpkeep;
import dev.mcpd.store.Batch;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.Sender;
import dev.mcpd.store.StoreLease;
import dev.mcpd.store.StoreLocation;
import dev.mcpd.testing.ReliabilityReport;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replicas on hosts whose clocks disagree, sharing one PostgreSQL archive: keys and batches are stamped and expired by
 * the server's clock, so a replica whose host runs eight days ahead neither forgets a key another stored a moment ago
 * nor stamps its own batches eight days late.
 */
class StoreClockTest {

    private static final StoreUpkeep SEVEN_DAYS = new StoreUpkeep(Duration.ofSeconds(1), Duration.ofDays(7),
            Optional.of(Duration.ofDays(7)));
    private static final Duration AHEAD = Duration.ofDays(8);

    @RegisterExtension
    final SchemaStore pg = new SchemaStore("mcpd_clock_");

    private static Batch batch(String key, long receivedAtMillis) {
        return new Batch(Optional.of(key), "/v1/ingest", "application/json", "", receivedAtMillis, 1, 0,
                ("{\"events\":[{\"k\":\"" + key + "\"}]}").getBytes(StandardCharsets.UTF_8));
    }

    private long one(String sql) throws Exception {
        try (Connection connection = pg.postgres().connect(pg.schema()); Statement statement = connection
                .createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aReplicaWhoseHostIsEightDaysAheadForgetsNothingAnotherJustStoredAndStampsByTheServersClock()
            throws Exception {
        InstantSource aheadClock = InstantSource.offset(InstantSource.system(), AHEAD);
        try (JdbcStore ahead = JdbcStore.open(StoreLocation.of(pg.postgres().url(pg.schema())), aheadClock)) {
            JdbcStore onTime = pg.store();
            assertTrue(Math.abs(ahead.now() - onTime.now()) < 2_000, "one clock for both: " + (ahead.now()
                    - onTime.now()) + " ms apart");

            assertEquals(1, onTime.archive(Sender.NONE, batch("stored-on-time", System.currentTimeMillis()))
                    .accepted());
            assertEquals(1, ahead.archive(Sender.NONE, batch("stored-ahead", aheadClock.millis())).accepted());
            long serverNow = one("SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint");
            long stampedAhead = one("SELECT received_at_ms FROM batches WHERE idempotency_key = 'stored-ahead'");
            assertTrue(Math.abs(stampedAhead - serverNow) < 2_000, "the batch the replica ahead received is stamped"
                    + " by the server's clock, " + (stampedAhead - serverNow) + " ms off, not 8 days");

            // The replica ahead holds the lease and sweeps with a 7-day window: by its host's clock both keys are
            // eight days old.
            UpkeepPass sweeper = new UpkeepPass(new StoreLease(ahead, "upkeep", "replica-ahead",
                    SEVEN_DAYS.leaseTerm()), ahead, SEVEN_DAYS, new CollectorMetrics(new SimpleMeterRegistry()),
                    aheadClock);
            sweeper.process(new DefaultExchange(new DefaultCamelContext()));
            assertTrue(sweeper.lastSweep().isPresent(), "the sweep ran");
            long keys = one("SELECT count(*) FROM idempotency_keys");
            long batches = one("SELECT count(*) FROM batches");
            int duplicate = ahead.archive(Sender.NONE, batch("stored-on-time", aheadClock.millis())).duplicate();
            sweeper.close();
            ReliabilityReport.assertHostile("a3-m1", "two collectors on one PostgreSQL archive, one host's clock 8"
                            + " days ahead; it holds the lease and sweeps with a 7-day dedup window and retention"
                            + " right after the other stored a key", "nothing forgotten or deleted; a copy of the key"
                            + " is a duplicate; the batch it received is stamped by the server's clock",
                    keys + " of 2 keys and " + batches + " of 2 batches kept; the copy counted " + duplicate
                            + " duplicate; its batch stamped " + (stampedAhead - serverNow) + " ms from the"
                            + " server's clock", keys == 2 && batches == 2 && duplicate == 1);
        }
    }
}
