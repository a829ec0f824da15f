package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpd.it.PackagedJar;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Scenario a: {@link FaultRig#REQUESTS} requests from 32 concurrent senders while the relay is
 * killed with SIGKILL and started again five times, deliveries to the collector running throughout — 40 ms of round
 * trip away (a delaying proxy), in batches, and each kill comes while entries are in flight. Every acknowledged
 * request is archived exactly once: none lost, none stored twice.
 */
class RelayKill9UnderLoadIT extends FaultScenario {

    static final int KILLS = 5;
    /** One way; a round trip is twice this. */
    static final Duration DELAY = Duration.ofMillis(20);
    /** Entries out for delivery at the moment of each kill, at least. */
    static final int IN_FLIGHT_AT_KILL = 8;

    @Test
    void everyAcknowledgedRequestIsArchivedExactlyOnceThroughFiveKill9s() throws Exception {
        try (FaultRig rig = scenario("a", "Relay kill -9 ×" + KILLS + " under load")
                .primaryThroughTcpProxy(DELAY)
                .start()) {
            Senders senders = rig.startLoad();
            List<String> kills = new ArrayList<>();
            for (int k = 1; k <= KILLS; k++) {
                int threshold = FaultRig.REQUESTS * k / (KILLS + 1);
                PackagedJar running = rig.relay();
                await("~" + threshold + " acknowledged, " + IN_FLIGHT_AT_KILL + " out for delivery")
                        .atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(2))
                        .until(() -> senders.settledCount() >= threshold && outForDelivery(running)
                                >= IN_FLIGHT_AT_KILL);
                long archivedAtKill = Readings.stats(rig.collector(0)).path("events").asLong();
                int ackedAtKill = senders.acknowledgedCount();
                JsonNode upstream = Readings.relayStatus(running).path("upstreams").path(0);
                String inFlight = upstream.path("inFlight").asInt() + " requests (" + upstream.path("protocol")
                        .asText() + (upstream.path("batches").asBoolean() ? ", batches" : "") + ")";
                rig.kill9Relay();
                kills.add(ackedAtKill + " acked/" + archivedAtKill + " archived/" + inFlight + " in flight");
                rig.startRelay();
            }
            rig.awaitLoad(Duration.ofSeconds(180));
            FaultRig.Counts counts = rig.settle();

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the relay was killed " + KILLS + " times while requests were unanswered",
                    kills.size() == KILLS);
            String notes = "SIGKILL at " + String.join(", ", kills) + "; senders saw " + senders.connectionFailures()
                    + " dropped/refused connections and retried.";
            rig.assertHolds(FaultRig.REQUESTS + " requests from " + FaultRig.SENDERS + " concurrent senders; the relay"
                            + " is killed with SIGKILL and restarted (same port, same spool) " + KILLS + " times, "
                            + "evenly through the run, while it accepts and delivers to one collector "
                            + 2 * DELAY.toMillis() + " ms of round trip away (relay batches, HTTP/2), each time with "
                            + "at least " + IN_FLIGHT_AT_KILL + " entries out for delivery.",
                    counts, extra, notes);
        }
    }

    private static int outForDelivery(PackagedJar relay) throws InterruptedException {
        try {
            return Readings.relayStatus(relay).path("spool").path("outForDelivery").asInt();
        } catch (IOException e) {
            return -1; // not answering yet: ask again
        }
    }
}
