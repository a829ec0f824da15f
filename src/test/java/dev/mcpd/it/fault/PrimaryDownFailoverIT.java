package dev.mcpd.it.fault;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Scenario b: a relay in front of a primary and a secondary collector on one archive. Paced load
 * (40 requests/s for 50 s from 32 senders); 8 s in, the primary is killed with SIGKILL and stays down for 20 s, then
 * starts again. Traffic fails over to the secondary, returns to the primary by itself once it is back — once its
 * health checks have passed the healthy threshold in a row (2 × 5 s at most), so the load goes on for
 * 22 s after its return — (its
 * {@code mcpd_relay_delivered_total{order="1"}} grows after its return), and every acknowledged request is archived
 * exactly once. The two collectors share one fresh schema of the test PostgreSQL: an answer lost by the kill is
 * recognised as a re-send by the shared store.
 */
class PrimaryDownFailoverIT extends FaultScenario {

    static final int REQUESTS = 2_000;
    static final Duration PACE = Duration.ofMillis(25);
    static final Duration DOWN_AT = Duration.ofSeconds(8);
    static final Duration DOWN_FOR = Duration.ofSeconds(20);

    @Test
    void failsOverWhileThePrimaryIsDownAndFailsBackWithNothingLostOrDoubled() throws Exception {
        try (FaultRig rig = scenario("b", "Primary collector down 20 s")
                .primaryAndSecondarySharingAnArchive()
                .requests(REQUESTS).paced(PACE)
                .start()) {
            Senders senders = rig.startLoad();
            rig.sleepUntil(DOWN_AT);
            long to1BeforeDown = rig.delivered(1);
            long to2BeforeDown = rig.delivered(2);
            int ackedAtDown = senders.acknowledgedCount();
            rig.kill9Collector(0);
            Senders.sleep(DOWN_FOR);
            long to2WhileDown = rig.delivered(2) - to2BeforeDown;
            rig.startCollector(0);
            long to1AtReturn = rig.delivered(1);
            int ackedAtReturn = senders.acknowledgedCount();
            rig.awaitLoad(Duration.ofSeconds(120));
            FaultRig.Counts counts = rig.settle();
            String scrape = rig.metrics();
            long to1 = (long) Readings.metric(scrape, "mcpd_relay_delivered_total", "order=\"1\"");
            long to2 = (long) Readings.metric(scrape, "mcpd_relay_delivered_total", "order=\"2\"");
            long failovers = (long) Readings.metric(scrape, "mcpd_relay_failovers_total");

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the primary took traffic before it went down (" + to1BeforeDown + ")", to1BeforeDown > 0);
            extra.put("the secondary took the traffic while the primary was down (" + to2WhileDown + ")",
                    to2WhileDown > 0);
            extra.put("failback: the primary's delivered count grows after its return (" + to1AtReturn + " → " + to1
                    + ")", to1 > to1AtReturn);
            String notes = String.format("Primary SIGKILLed at %d acked, back at %d acked. Relay delivered %d to the "
                            + "primary (%d before it went down, %d after its return) and %d to the secondary (%d "
                            + "while the primary was down); failovers %d.",
                    ackedAtDown, ackedAtReturn, to1, to1BeforeDown,
                    to1 - to1AtReturn, to2, to2WhileDown, failovers);
            rig.assertHolds(REQUESTS + " requests paced over " + (REQUESTS * PACE.toMillis() / 1000) + " s from "
                            + FaultRig.SENDERS + " senders; relay → primary, secondary collector; "
                            + DOWN_AT.toSeconds() + " s in the primary goes down for " + DOWN_FOR.toSeconds()
                            + " s, then starts again on its port.",
                    counts, extra, notes);
        }
    }
}
