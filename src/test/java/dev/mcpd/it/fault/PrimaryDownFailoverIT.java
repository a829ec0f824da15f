package dev.mcpd.it.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.it.PackagedJar;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario b: a relay in front of a primary and a secondary collector on one archive. Paced load
 * (40 requests/s for 50 s from 32 senders); 8 s in, the primary is killed with SIGKILL and stays down for 20 s, then
 * starts again. Traffic fails over to the secondary, returns to the primary by itself once it is back — once its
 * health checks have passed the healthy threshold in a row (2 × 5 s at most), so the load goes on for
 * 22 s after its return — (its
 * {@code mcpd_relay_delivered_total{order="1"}} grows after its return), and every acknowledged request is archived
 * exactly once. On PostgreSQL (two collectors, one fresh schema) when {@code MCPD_TEST_POSTGRES_URL} is set; otherwise
 * one SQLite file each, added up — and then the primary is stopped with SIGTERM rather than SIGKILL, since an answer
 * lost by a kill would let the same request be stored once in each file, which no idempotency key can prevent across
 * two unshared stores.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PrimaryDownFailoverIT {

    static final int REQUESTS = 2_000;
    static final Duration PACE = Duration.ofMillis(25);
    static final Duration DOWN_AT = Duration.ofSeconds(8);
    static final Duration DOWN_FOR = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void failsOverWhileThePrimaryIsDownAndFailsBackWithNothingLostOrDoubled() throws Exception {
        Archive archive = Archive.sharedByTwo(dir);
        try (FaultRig rig = new FaultRig(dir, archive)) {
            int port1 = PackagedJar.freePort();
            int port2 = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar primary = rig.collector(0, port1);
            PackagedJar secondary = rig.collector(1, port2);
            PackagedJar relay = rig.relay(relayPort, Map.of(), "--upstream", FaultRig.upstream(port1), "--upstream",
                    FaultRig.upstream(port2));

            long start = System.nanoTime();
            Senders senders = new Senders(rig.run, "b", REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort), PACE, 0)
                    .start();
            long to1BeforeDown;
            long to2BeforeDown;
            long to2WhileDown;
            long to1AtReturn;
            int ackedAtDown;
            int ackedAtReturn;
            try {
                Senders.sleep(Duration.ofNanos(start + DOWN_AT.toNanos() - System.nanoTime()));
                to1BeforeDown = FaultRig.delivered(relay, 1);
                to2BeforeDown = FaultRig.delivered(relay, 2);
                ackedAtDown = senders.acknowledgedCount();
                if (archive.shared()) {
                    primary.kill9();
                } else {
                    primary.terminate();
                }
                rig.forget(primary);
                long downAt = System.nanoTime();
                Senders.sleep(Duration.ofNanos(downAt + DOWN_FOR.toNanos() - System.nanoTime()));
                to2WhileDown = FaultRig.delivered(relay, 2) - to2BeforeDown;
                primary = rig.collector(0, port1);
                to1AtReturn = FaultRig.delivered(relay, 1);
                ackedAtReturn = senders.acknowledgedCount();
                senders.await(Duration.ofSeconds(120));
            } finally {
                senders.stop();
            }
            FaultRig.Counts counts = rig.settle(senders, relay, List.of(primary, secondary));
            String scrape = FaultRig.metrics(relay);
            long to1 = (long) FaultRig.metric(scrape, "mcpd_relay_delivered_total", "order=\"1\"");
            long to2 = (long) FaultRig.metric(scrape, "mcpd_relay_delivered_total", "order=\"2\"");
            long failovers = (long) FaultRig.metric(scrape, "mcpd_relay_failovers_total");

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the primary took traffic before it went down (" + to1BeforeDown + ")", to1BeforeDown > 0);
            extra.put("the secondary took the traffic while the primary was down (" + to2WhileDown + ")",
                    to2WhileDown > 0);
            extra.put("failback: the primary's delivered count grows after its return (" + to1AtReturn + " → " + to1
                    + ")", to1 > to1AtReturn);
            String notes = String.format("Primary %s at %d acked, back at %d acked. Relay delivered %d to the "
                            + "primary (%d before it went down, %d after its return) and %d to the secondary (%d "
                            + "while the primary was down); failovers %d.",
                    archive.shared() ? "SIGKILLed" : "SIGTERMed", ackedAtDown, ackedAtReturn, to1, to1BeforeDown,
                    to1 - to1AtReturn, to2, to2WhileDown, failovers);
            List<String> problems = rig.verdict("b", "Primary collector down 20 s",
                    REQUESTS + " requests paced over " + (REQUESTS * PACE.toMillis() / 1000) + " s from "
                            + FaultRig.SENDERS + " senders; relay → primary, secondary collector; "
                            + DOWN_AT.toSeconds() + " s in the primary goes down for " + DOWN_FOR.toSeconds()
                            + " s, then starts again on its port.",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario b");
        }
    }
}
