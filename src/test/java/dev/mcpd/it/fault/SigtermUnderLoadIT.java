package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.it.PackagedJar;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario f (graceful stop): the relay is stopped with SIGTERM while 32 senders post and its workers
 * deliver, and started again — twice. It exits with 143, keeps what it had not delivered, and after the restarts every
 * acknowledged request is archived exactly once.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SigtermUnderLoadIT {

    static final int REQUESTS = 1_000;
    static final int STOPS = 2;
    static final int EXPECTED_EXIT = 143;

    @TempDir
    Path dir;

    @Test
    void aSigtermUnderLoadLosesNothingAcknowledgedAndStoresNothingTwice() throws Exception {
        try (FaultRig rig = new FaultRig(dir, Archive.sqlite(dir, 1))) {
            int collectorPort = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar collector = rig.collector(0, collectorPort);
            String[] relayArgs = {"--upstream", FaultRig.upstream(collectorPort)};
            PackagedJar relay = rig.relay(relayPort, Map.of(), relayArgs);

            Senders senders = new Senders(rig.run, "f", REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort), null, 0)
                    .start();
            List<Integer> exits = new ArrayList<>();
            List<String> stops = new ArrayList<>();
            try {
                for (int k = 1; k <= STOPS; k++) {
                    int threshold = REQUESTS * k / (STOPS + 1);
                    await("~" + threshold + " acknowledged").atMost(Duration.ofSeconds(120))
                            .pollInterval(Duration.ofMillis(2)).until(() -> senders.settledCount() >= threshold);
                    int acked = senders.acknowledgedCount();
                    long archived = FaultRig.stats(collector).path("events").asLong();
                    long started = System.nanoTime();
                    exits.add(relay.terminate());
                    rig.forget(relay);
                    stops.add(String.format("%d acked/%d archived (stopped in %d ms)", acked, archived,
                            (System.nanoTime() - started) / 1_000_000));
                    relay = rig.relay(relayPort, Map.of(), relayArgs);
                }
                senders.await(Duration.ofSeconds(180));
            } finally {
                senders.stop();
            }
            FaultRig.Counts counts = rig.settle(senders, relay, List.of(collector));

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the relay exited with " + EXPECTED_EXIT + " after each SIGTERM (" + exits + ")",
                    exits.stream().allMatch(status -> status == EXPECTED_EXIT) && exits.size() == STOPS);
            String notes = "SIGTERM at " + String.join(", ", stops) + "; exit statuses " + exits + "; senders saw "
                    + senders.connectionFailures() + " dropped/refused connections and " + senders.refusedFull()
                    + " 503s, and retried.";
            List<String> problems = rig.verdict("f", "SIGTERM under load ×" + STOPS,
                    REQUESTS + " requests from " + FaultRig.SENDERS + " senders; the relay is stopped with SIGTERM "
                            + "while it accepts and delivers, then started again (same port, same spool), " + STOPS
                            + " times.",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario f");
        }
    }
}
