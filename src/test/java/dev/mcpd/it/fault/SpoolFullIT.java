package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Scenario e: a relay with a 64 KiB spool and its collector down at first, under load from 32 senders of
 * ~1 KiB requests. The spool fills; senders get {@code 503} with {@code Retry-After: 5} and wait that long before
 * trying again; the collector starts, the relay drains, the senders' retries are taken. Nothing acknowledged is lost,
 * and the spool never holds more than its bound (sampled from {@code mcpd_relay_spool_bytes} every 50 ms).
 */
class SpoolFullIT extends FaultScenario {

    static final int REQUESTS = 500;
    static final long BOUND = 64 * 1024;
    static final int PAD = 900;

    @Test
    void aFullSpoolRefusesWith503RetryAfter5AndLosesNothingAcknowledged() throws Exception {
        try (FaultRig rig = scenario("e", "Spool full under load")
                .primaryDownAtFirst()
                .relayOptions("--spool-max-bytes", "64KiB")
                .requests(REQUESTS).padded(PAD)
                .start()) {
            Readings.Peak spoolBytes = rig.peakOf("mcpd_relay_spool_bytes", Duration.ofMillis(50));
            Senders senders = rig.startLoad();
            await("the spool is full and every sender was refused").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(20)).until(() -> senders.refusedFull() >= FaultRig.SENDERS);
            long refusedBeforeCollector = senders.refusedFull();
            int ackedBeforeCollector = senders.acknowledgedCount();
            rig.startCollector(0);
            rig.awaitLoad(Duration.ofSeconds(200));
            FaultRig.Counts counts = rig.settle();
            spoolBytes.close();
            String scrape = rig.metrics();
            long refusedFullMetric = (long) Readings.metric(scrape, "mcpd_relay_refused_full_total");

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("senders were refused for space (" + senders.refusedFull() + " × 503)",
                    senders.refusedFull() > 0);
            extra.put("every 503 carried Retry-After: 5 (" + senders.refusedFullWithRetryAfter5() + " of "
                    + senders.refusedFull() + ")", senders.refusedFullWithRetryAfter5() == senders.refusedFull());
            extra.put("the relay counted each refusal (mcpd_relay_refused_full_total " + refusedFullMetric + ")",
                    refusedFullMetric == senders.refusedFull());
            extra.put("the spool never exceeded 64 KiB (max seen " + spoolBytes.max() + " bytes)",
                    spoolBytes.max() <= BOUND);
            String notes = String.format("%d acked and %d refused (503, Retry-After: 5) before the collector started;"
                            + " %d refusals in all (relay metric %d), each waited out; spool peak %d of %d bytes.",
                    ackedBeforeCollector, refusedBeforeCollector, senders.refusedFull(), refusedFullMetric,
                    spoolBytes.max(), BOUND);
            rig.assertHolds(REQUESTS + " ~1 KiB requests from " + FaultRig.SENDERS + " senders to a relay with "
                            + "`--spool-max-bytes 64KiB` whose collector is down at first; it starts once every "
                            + "sender has been refused.",
                    counts, extra, notes);
        }
    }
}
