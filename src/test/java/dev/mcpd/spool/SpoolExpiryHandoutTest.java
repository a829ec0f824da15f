package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Spool#takeReceivedBefore}: what {@code --spool-max-age} takes, oldest first, never an entry a lane holds. */
class SpoolExpiryHandoutTest {

    @TempDir
    Path dir;

    private static SpoolRequest receivedAt(long millis) {
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k" + millis, Optional.empty(), millis,
                "{}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void takesTheOlderEntriesNoLaneHoldsAndStopsAtTheFirstYoungerOne() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            for (long at : List.of(100L, 200L, 300L, 900L, 400L)) {
                spool.append(receivedAt(at)).get(10, TimeUnit.SECONDS);
            }
            SpoolEntry held = spool.next(Duration.ofSeconds(1)).orElseThrow(); // a lane holds the one of 100
            List<SpoolEntry> old = spool.takeReceivedBefore(500, 10);
            assertEquals(List.of(200L, 300L), old.stream().map(e -> e.request().receivedAtMillis()).toList(),
                    "not the held one, and not the 400 behind the younger 900");
            assertEquals(3, spool.outForDelivery());
            spool.release(held.seq());
            assertEquals(List.of(100L), spool.takeReceivedBefore(500, 10).stream()
                    .map(e -> e.request().receivedAtMillis()).toList(), "a released entry is taken too");
            assertEquals(List.of(), spool.takeReceivedBefore(50, 10));
            assertEquals(900L, spool.next(Duration.ofSeconds(1)).orElseThrow().request().receivedAtMillis(),
                    "delivery goes on with what is left");
        }
    }

    @Test
    void takesAtMostTheNumberAsked() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            for (long at = 1; at <= 5; at++) {
                spool.append(receivedAt(at)).get(10, TimeUnit.SECONDS);
            }
            assertEquals(2, spool.takeReceivedBefore(100, 2).size());
            assertEquals(3, spool.takeReceivedBefore(100, 10).size());
        }
    }
}
