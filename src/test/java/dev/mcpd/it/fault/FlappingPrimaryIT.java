package dev.mcpd.it.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Scenario c: the primary collector's network flaps — a {@link TcpProxy} in front of it goes down
 * (connections refused, open ones reset mid-answer) and up every 2 s for 12 s — under paced load from 32 senders;
 * a secondary collector shares its archive (PostgreSQL when configured, else one SQLite file each, added up). Every
 * acknowledged request is archived exactly once, and the primary takes traffic again after the last flap — once its
 * health checks have passed the healthy threshold in a row.
 */
class FlappingPrimaryIT extends FaultScenario {

    // 30 s of load: 15 s after the last flap, longer than the healthy threshold of checks in a row takes (2 × 5 s)
    static final int REQUESTS = 1_500;
    static final Duration PACE = Duration.ofMillis(20);
    static final Duration FIRST_DOWN = Duration.ofSeconds(3);
    static final Duration FLAP = Duration.ofSeconds(2);
    static final int DOWNS = 3;

    @Test
    void aPrimaryFlappingEveryTwoSecondsLosesNothingAndDoublesNothing() throws Exception {
        try (FaultRig rig = scenario("c", "Flapping primary")
                .primaryAndSecondarySharingAnArchive()
                .primaryThroughTcpProxy(Duration.ZERO)
                .requests(REQUESTS).paced(PACE)
                .start()) {
            TcpProxy network = rig.proxy();
            rig.startLoad();
            List<String> flaps = new ArrayList<>();
            Duration at = FIRST_DOWN;
            for (int i = 0; i < DOWNS; i++) {
                rig.sleepUntil(at);
                network.down();
                flaps.add("down " + rig.delivered(1) + "/" + rig.delivered(2));
                at = at.plus(FLAP);
                rig.sleepUntil(at);
                network.up();
                at = at.plus(FLAP);
            }
            long to1AtLastUp = rig.delivered(1);
            rig.awaitLoad(Duration.ofSeconds(120));
            FaultRig.Counts counts = rig.settle();
            String scrape = rig.metrics();
            long to1 = (long) Readings.metric(scrape, "mcpd_relay_delivered_total", "order=\"1\"");
            long to2 = (long) Readings.metric(scrape, "mcpd_relay_delivered_total", "order=\"2\"");
            long failed1 = (long) Readings.metric(scrape, "mcpd_relay_failed_attempts_total", "order=\"1\"");
            long failovers = (long) Readings.metric(scrape, "mcpd_relay_failovers_total");

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the secondary took traffic while the primary flapped (" + to2 + ")", to2 > 0);
            extra.put("the primary takes traffic again after the last flap (" + to1AtLastUp + " → " + to1 + ")",
                    to1 > to1AtLastUp);
            String notes = String.format("%d down/up cycles of %d s (delivered primary/secondary at each down: %s); "
                            + "relay delivered %d to the primary (%d after the last flap), %d to the secondary; %d "
                            + "failed attempts on the primary, %d failovers; %d connections through the proxy.",
                    DOWNS, FLAP.toSeconds(), String.join(", ", flaps).replace("down ", ""), to1, to1 - to1AtLastUp,
                    to2, failed1, failovers, network.connections());
            rig.assertHolds(REQUESTS + " requests paced over " + (REQUESTS * PACE.toMillis() / 1000) + " s from "
                            + FaultRig.SENDERS + " senders; relay → primary (through a TCP proxy), secondary; from "
                            + FIRST_DOWN.toSeconds() + " s the proxy is down/up every " + FLAP.toSeconds() + " s for "
                            + (2 * DOWNS * FLAP.toSeconds()) + " s (down: connections refused, open ones reset).",
                    counts, extra, notes);
        }
    }
}
