package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
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
 * Scenario a: {@link FaultRig#REQUESTS} requests from 32 concurrent senders while the relay is
 * killed with SIGKILL and started again five times, deliveries to the collector running throughout — 40 ms of round
 * trip away (a delaying proxy), in batches, and each kill comes while entries are in flight. Every acknowledged
 * request is archived exactly once: none lost, none stored twice.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RelayKill9UnderLoadIT {

    static final int KILLS = 5;
    /** One way; a round trip is twice this. */
    static final Duration DELAY = Duration.ofMillis(20);
    /** Entries out for delivery at the moment of each kill, at least. */
    static final int IN_FLIGHT_AT_KILL = 8;

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedRequestIsArchivedExactlyOnceThroughFiveKill9s() throws Exception {
        try (FaultRig rig = new FaultRig(dir, Archive.sqlite(dir, 1))) {
            int collectorPort = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar collector = rig.collector(0, collectorPort);
            int linkPort = PackagedJar.freePort();
            rig.keep(new TcpProxy(linkPort, collectorPort, DELAY)).up();
            String[] relayArgs = {"--upstream", FaultRig.upstream(linkPort)};
            PackagedJar relay = rig.relay(relayPort, Map.of(), relayArgs);

            Senders senders = new Senders(rig.run, "a", FaultRig.REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort),
                    null, 0).start();
            List<String> kills = new ArrayList<>();
            List<Long> deliveredBeforeKill = new ArrayList<>();
            try {
                for (int k = 1; k <= KILLS; k++) {
                    int threshold = FaultRig.REQUESTS * k / (KILLS + 1);
                    PackagedJar running = relay;
                    await("~" + threshold + " acknowledged, " + IN_FLIGHT_AT_KILL + " out for delivery")
                            .atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(2))
                            .until(() -> senders.settledCount() >= threshold && outForDelivery(running)
                                    >= IN_FLIGHT_AT_KILL);
                    long archivedAtKill = FaultRig.stats(collector).path("events").asLong();
                    int ackedAtKill = senders.acknowledgedCount();
                    JsonNode upstream = FaultRig.relayStatus(relay).path("upstreams").path(0);
                    String inFlight = upstream.path("inFlight").asInt() + " requests (" + upstream.path("protocol")
                            .asText() + (upstream.path("batches").asBoolean() ? ", batches" : "") + ")";
                    relay.kill9();
                    rig.forget(relay);
                    kills.add(ackedAtKill + " acked/" + archivedAtKill + " archived/" + inFlight + " in flight");
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
                            + "through the run, while it accepts and delivers to one collector " + 2 * DELAY.toMillis()
                            + " ms of round trip away (relay batches, HTTP/2), each time with at least "
                            + IN_FLIGHT_AT_KILL + " entries out for delivery.",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario a");
        }
    }

    private static int outForDelivery(PackagedJar relay) throws InterruptedException {
        try {
            return FaultRig.relayStatus(relay).path("spool").path("outForDelivery").asInt();
        } catch (java.io.IOException e) {
            return -1; // not answering yet: ask again
        }
    }
}
