package dev.mcpd.spool;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.ReliabilityReport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the relay reports of dead/: its own keeps at once, what the CLI changed within a second. */
class DeadLettersCensusTest {

    @TempDir
    Path dir;

    private static SpoolEntry entry(long seq) {
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k" + seq,
                Optional.empty(), 1L, "{}".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aKeepCountsAtOnceAndAPurgeByAnotherProcessShowsWithinASecond() throws Exception {
        DeadLetters relay = new DeadLetters(dir);
        assertEquals(0, relay.census().count());
        for (long seq = 1; seq <= 3; seq++) {
            relay.keep(entry(seq), new DeadLetters.Refusal("http://up", 400, Instant.now(), "refused", new byte[0]));
        }
        DeadLetters.Census kept = relay.census();
        assertEquals(3, kept.count());
        assertTrue(kept.bytes() > 0 && kept.oldest().isPresent(), kept.toString());
        assertEquals(2, relay.countBetween(1, 2));

        DeadLetters cli = DeadLetters.beside(dir).orElseThrow();
        assertTrue(cli.purge(2));
        await().atMost(Duration.ofSeconds(3)).until(() -> relay.census().count() == 2);
        assertEquals(1, relay.countBetween(1, 2), "the barrier's count follows the purge too");
    }

    @Test
    void theCensusForAnEventLoopNeverReadsTheDirectoryOnItsCallersThread() throws Exception {
        DeadLetters relay = new DeadLetters(dir);
        for (long seq = 1; seq <= 3; seq++) {
            relay.keep(entry(seq), new DeadLetters.Refusal("http://up", 400, Instant.now(), "refused", new byte[0]));
        }
        assertTrue(relay.purge(2)); // the census is now out of date: the next look must count again
        // Listing a dead/ of 150 000 files took seconds, on the event loop that answers /metrics: the answer is the
        // census as it stood, and the count is made elsewhere.
        long standing = relay.recentCensus().count();
        ReliabilityReport.assertHostile("a3-m4", "dead/ changed since its last count, and"
                        + " /metrics, /relay/status or /relay/sync ask for its census on an event loop",
                "the census as it stood, at once; the directory counted again on a thread of its own",
                "answered " + standing + " (as it stood) without listing dead/ on the caller's thread",
                standing == 3);
        await().atMost(Duration.ofSeconds(3)).until(() -> relay.recentCensus().count() == 2);
        assertEquals(1, relay.recentCountBetween(1, 2));
        assertEquals(2, relay.census().count(), "the CLI's census waits for the directory");
    }
}
