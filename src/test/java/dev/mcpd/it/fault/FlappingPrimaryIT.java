package dev.mcpd.it.fault;

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
 * Scenario c: the primary collector's network flaps — a {@link TcpProxy} in front of it goes down
 * (connections refused, open ones reset mid-answer) and up every 2 s for 12 s — under paced load from 32 senders;
 * a secondary collector shares its archive (PostgreSQL when configured, else one SQLite file each, added up). Every
 * acknowledged request is archived exactly once, and the primary takes traffic again after the last flap — once its
 * health checks have passed the healthy threshold in a row.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class FlappingPrimaryIT {

    // 30 s of load: 15 s after the last flap, longer than the healthy threshold of checks in a row takes (2 × 5 s)
    static final int REQUESTS = 1_500;
    static final Duration PACE = Duration.ofMillis(20);
    static final Duration FIRST_DOWN = Duration.ofSeconds(3);
    static final Duration FLAP = Duration.ofSeconds(2);
    static final int DOWNS = 3;

    @TempDir
    Path dir;

    @Test
    void aPrimaryFlappingEveryTwoSecondsLosesNothingAndDoublesNothing() throws Exception {
        try (FaultRig rig = new FaultRig(dir, Archive.sharedByTwo(dir))) {
            int port1 = PackagedJar.freePort();
            int port2 = PackagedJar.freePort();
            int proxyPort = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar primary = rig.collector(0, port1);
            PackagedJar secondary = rig.collector(1, port2);
            TcpProxy network = rig.keep(new TcpProxy(proxyPort, port1)).up();
            PackagedJar relay = rig.relay(relayPort, Map.of(), "--upstream", FaultRig.upstream(proxyPort),
                    "--upstream", FaultRig.upstream(port2));

            long start = System.nanoTime();
            Senders senders = new Senders(rig.run, "c", REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort), PACE, 0)
                    .start();
            List<String> flaps = new ArrayList<>();
            long to1AtLastUp;
            try {
                long at = start + FIRST_DOWN.toNanos();
                for (int i = 0; i < DOWNS; i++) {
                    Senders.sleep(Duration.ofNanos(at - System.nanoTime()));
                    network.down();
                    flaps.add("down " + FaultRig.delivered(relay, 1) + "/" + FaultRig.delivered(relay, 2));
                    at += FLAP.toNanos();
                    Senders.sleep(Duration.ofNanos(at - System.nanoTime()));
                    network.up();
                    at += FLAP.toNanos();
                }
                to1AtLastUp = FaultRig.delivered(relay, 1);
                senders.await(Duration.ofSeconds(120));
            } finally {
                senders.stop();
            }
            FaultRig.Counts counts = rig.settle(senders, relay, List.of(primary, secondary));
            String scrape = FaultRig.metrics(relay);
            long to1 = (long) FaultRig.metric(scrape, "mcpd_relay_delivered_total", "order=\"1\"");
            long to2 = (long) FaultRig.metric(scrape, "mcpd_relay_delivered_total", "order=\"2\"");
            long failed1 = (long) FaultRig.metric(scrape, "mcpd_relay_failed_attempts_total", "order=\"1\"");
            long failovers = (long) FaultRig.metric(scrape, "mcpd_relay_failovers_total");

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the secondary took traffic while the primary flapped (" + to2 + ")", to2 > 0);
            extra.put("the primary takes traffic again after the last flap (" + to1AtLastUp + " → " + to1 + ")",
                    to1 > to1AtLastUp);
            String notes = String.format("%d down/up cycles of %d s (delivered primary/secondary at each down: %s); "
                            + "relay delivered %d to the primary (%d after the last flap), %d to the secondary; %d "
                            + "failed attempts on the primary, %d failovers; %d connections through the proxy.",
                    DOWNS, FLAP.toSeconds(), String.join(", ", flaps).replace("down ", ""), to1, to1 - to1AtLastUp,
                    to2, failed1, failovers, network.connections());
            List<String> problems = rig.verdict("c", "Flapping primary",
                    REQUESTS + " requests paced over " + (REQUESTS * PACE.toMillis() / 1000) + " s from "
                            + FaultRig.SENDERS + " senders; relay → primary (through a TCP proxy), secondary; from "
                            + FIRST_DOWN.toSeconds() + " s the proxy is down/up every " + FLAP.toSeconds() + " s for "
                            + (2 * DOWNS * FLAP.toSeconds()) + " s (down: connections refused, open ones reset).",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario c");
        }
    }
}
