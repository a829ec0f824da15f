package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.CapturedLog;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --spool-max-age}: expired entries move to dead/, counted, told to a waiting sender, one line. */
class SpoolExpiryTest {

    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

    @TempDir
    Path dir;

    private static SpoolRequest receivedSecondsAgo(long seconds) {
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k" + seconds, Optional.empty(),
                NOW.minusSeconds(seconds).toEpochMilli(), "{}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void entriesOlderThanTheAgeMoveToDeadAsExpiredAndTheYoungerStay() throws Exception {
        EntryFates fates = new EntryFates();
        try (Spool spool = Spool.open(dir); CapturedLog log = new CapturedLog()) {
            long first = spool.append(receivedSecondsAgo(100)).get(10, TimeUnit.SECONDS).seq();
            spool.append(receivedSecondsAgo(90)).get(10, TimeUnit.SECONDS);
            spool.append(receivedSecondsAgo(1)).get(10, TimeUnit.SECONDS);
            CompletableFuture<EntryFates.Fate> fate = fates.expect(first);
            DeadLetters dead = new DeadLetters(dir);
            SpoolExpiry expiry = new SpoolExpiry(Optional.of(Duration.ofMinutes(1)), spool, dead, fates,
                    new EntryRecords(seq -> true, InstantSource.fixed(NOW)), InstantSource.fixed(NOW));
            expiry.process(null);

            assertEquals(2, expiry.expired());
            assertEquals(1, spool.entries(), "the young one waits on");
            List<DeadLetter> letters = dead.list();
            assertEquals(2, letters.size());
            assertEquals("expired: waited 100s in the spool, longer than --spool-max-age 1m",
                    letters.get(0).reason());
            assertTrue(letters.get(0).expired());
            assertEquals(0, letters.get(0).status());
            assertEquals(SpoolExpiry.STATUS, fate.get(1, TimeUnit.SECONDS).status(), "a waiting sender hears 504");
            assertEquals(1, log.events("dev.mcpd.delivery.expiry", Level.WARN).size(), "one line per sweep");
            assertTrue(log.events("dev.mcpd.delivery.expiry", Level.WARN).get(0).getFormattedMessage()
                    .startsWith("expired 2 entries that waited longer than --spool-max-age 1m"));

            expiry.process(null);
            assertEquals(1, log.events("dev.mcpd.delivery.expiry", Level.WARN).size(), "a sweep with none is quiet");
        }
    }

    @Test
    void withoutAnAgeNothingExpiresAndTheSweepIntervalFollowsTheAge() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            spool.append(receivedSecondsAgo(1_000_000)).get(10, TimeUnit.SECONDS);
            SpoolExpiry none = new SpoolExpiry(Optional.empty(), spool, new DeadLetters(dir), new EntryFates(),
                    new EntryRecords(seq -> true, InstantSource.fixed(NOW)), InstantSource.fixed(NOW));
            none.process(null);
            assertEquals(1, spool.entries());
            assertEquals(0, none.expired());
        }
        assertEquals(Duration.ofSeconds(1), SpoolExpiry.sweepInterval(Optional.of(Duration.ofSeconds(2))));
        assertEquals(Duration.ofSeconds(6), SpoolExpiry.sweepInterval(Optional.of(Duration.ofMinutes(1))));
        assertEquals(Duration.ofMinutes(1), SpoolExpiry.sweepInterval(Optional.of(Duration.ofDays(7))));
    }
}
