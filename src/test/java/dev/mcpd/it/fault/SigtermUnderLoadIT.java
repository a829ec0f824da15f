package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Scenario f (graceful stop): the relay is stopped with SIGTERM while 32 senders post and its workers
 * deliver, and started again — twice. It exits with 143, keeps what it had not delivered, and after the restarts every
 * acknowledged request is archived exactly once.
 */
class SigtermUnderLoadIT extends FaultScenario {

    static final int REQUESTS = 1_000;
    static final int STOPS = 2;
    static final int EXPECTED_EXIT = 143;

    @Test
    void aSigtermUnderLoadLosesNothingAcknowledgedAndStoresNothingTwice() throws Exception {
        try (FaultRig rig = scenario("f", "SIGTERM under load ×" + STOPS)
                .requests(REQUESTS)
                .start()) {
            Senders senders = rig.startLoad();
            List<Integer> exits = new ArrayList<>();
            List<String> stops = new ArrayList<>();
            for (int k = 1; k <= STOPS; k++) {
                int threshold = REQUESTS * k / (STOPS + 1);
                await("~" + threshold + " acknowledged").atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(2)).until(() -> senders.settledCount() >= threshold);
                int acked = senders.acknowledgedCount();
                long archived = Readings.stats(rig.collector(0)).path("events").asLong();
                long started = System.nanoTime();
                exits.add(rig.terminateRelay());
                stops.add(String.format("%d acked/%d archived (stopped in %d ms)", acked, archived,
                        (System.nanoTime() - started) / 1_000_000));
                rig.startRelay();
            }
            rig.awaitLoad(Duration.ofSeconds(180));
            FaultRig.Counts counts = rig.settle();

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the relay exited with " + EXPECTED_EXIT + " after each SIGTERM (" + exits + ")",
                    exits.stream().allMatch(status -> status == EXPECTED_EXIT) && exits.size() == STOPS);
            String notes = "SIGTERM at " + String.join(", ", stops) + "; exit statuses " + exits + "; senders saw "
                    + senders.connectionFailures() + " dropped/refused connections and " + senders.refusedFull()
                    + " 503s, and retried.";
            rig.assertHolds(REQUESTS + " requests from " + FaultRig.SENDERS + " senders; the relay is stopped with "
                            + "SIGTERM while it accepts and delivers, then started again (same port, same spool), "
                            + STOPS + " times.",
                    counts, extra, notes);
        }
    }
}
