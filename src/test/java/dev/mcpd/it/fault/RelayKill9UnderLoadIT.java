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
 * Scenario a (SPEC §2, §3, §4): {@link FaultRig#REQUESTS} requests from 32 concurrent senders while the relay is
 * killed with SIGKILL and started again five times, deliveries to the collector running throughout. Every
 * acknowledged request is archived exactly once: none lost, none stored twice.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RelayKill9UnderLoadIT {

    static final int KILLS = 5;

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedRequestIsArchivedExactlyOnceThroughFiveKill9s() throws Exception {
        try (FaultRig rig = new FaultRig(dir, Archive.sqlite(dir, 1))) {
            int collectorPort = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar collector = rig.collector(0, collectorPort);
            String[] relayArgs = {"--upstream", FaultRig.upstream(collectorPort)};
            PackagedJar relay = rig.relay(relayPort, Map.of(), relayArgs);

            Senders senders = new Senders(rig.run, "a", FaultRig.REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort),
                    null, 0).start();
            List<String> kills = new ArrayList<>();
            List<Long> deliveredBeforeKill = new ArrayList<>();
            try {
                for (int k = 1; k <= KILLS; k++) {
                    int threshold = FaultRig.REQUESTS * k / (KILLS + 1);
                    await("~" + threshold + " acknowledged").atMost(Duration.ofSeconds(120))
                            .pollInterval(Duration.ofMillis(2)).until(() -> senders.settledCount() >= threshold);
                    long archivedAtKill = FaultRig.stats(collector).path("events").asLong();
                    int ackedAtKill = senders.acknowledgedCount();
                    relay.kill9();
                    rig.forget(relay);
                    kills.add(ackedAtKill + " acked/" + archivedAtKill + " archived");
                    deliveredBeforeKill.add(archivedAtKill);
                    relay = rig.relay(relayPort, Map.of(), relayArgs);
                }
                senders.await(Duration.ofSeconds(180));
            } finally {
                senders.stop();
            }
            FaultRig.Counts counts = rig.settle(senders, relay, List.of(collector));

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the relay was killed " + KILLS + " times while requests were unanswered",
                    kills.size() == KILLS);
            String notes = "SIGKILL at " + String.join(", ", kills) + "; senders saw " + senders.connectionFailures()
                    + " dropped/refused connections and retried.";
            List<String> problems = rig.verdict("a", "Relay kill -9 ×" + KILLS + " under load",
                    FaultRig.REQUESTS + " requests from " + FaultRig.SENDERS + " concurrent senders; the relay is "
                            + "killed with SIGKILL and restarted (same port, same spool) " + KILLS + " times, evenly "
                            + "through the run, while it accepts and delivers to one collector.",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario a");
        }
    }
}
