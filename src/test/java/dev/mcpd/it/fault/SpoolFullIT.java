package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.it.PackagedJar;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario e: a relay with a 64 KiB spool and its collector down at first, under load from 32 senders of
 * ~1 KiB requests. The spool fills; senders get {@code 503} with {@code Retry-After: 5} and wait that long before
 * trying again; the collector starts, the relay drains, the senders' retries are taken. Nothing acknowledged is lost,
 * and the spool never holds more than its bound (sampled from {@code mcpd_relay_spool_bytes} every 50 ms).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SpoolFullIT {

    static final int REQUESTS = 500;
    static final long BOUND = 64 * 1024;
    static final int PAD = 900;

    @TempDir
    Path dir;

    @Test
    void aFullSpoolRefusesWith503RetryAfter5AndLosesNothingAcknowledged() throws Exception {
        try (FaultRig rig = new FaultRig(dir, Archive.sqlite(dir, 1))) {
            int collectorPort = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar relay = rig.relay(relayPort, Map.of(), "--spool-max-bytes", "64KiB", "--upstream",
                    FaultRig.upstream(collectorPort));
            AtomicLong maxSpoolBytes = new AtomicLong();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        long bytes = (long) FaultRig.metric(FaultRig.metrics(relay), "mcpd_relay_spool_bytes");
                        maxSpoolBytes.accumulateAndGet(bytes, Math::max);
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // the relay is busy: sample again
                    }
                }
            }, "spool-bytes-sampler");
            sampler.setDaemon(true);
            sampler.start();

            Senders senders = new Senders(rig.run, "e", REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort), null,
                    PAD).start();
            PackagedJar collector;
            long refusedBeforeCollector;
            int ackedBeforeCollector;
            try {
                await("the spool is full and every sender was refused").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(20)).until(() -> senders.refusedFull() >= FaultRig.SENDERS);
                refusedBeforeCollector = senders.refusedFull();
                ackedBeforeCollector = senders.acknowledgedCount();
                collector = rig.collector(0, collectorPort);
                senders.await(Duration.ofSeconds(200));
            } finally {
                senders.stop();
            }
            FaultRig.Counts counts = rig.settle(senders, relay, List.of(collector));
            sampler.interrupt();
            String scrape = FaultRig.metrics(relay);
            long refusedFullMetric = (long) FaultRig.metric(scrape, "mcpd_relay_refused_full_total");

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("senders were refused for space (" + senders.refusedFull() + " × 503)",
                    senders.refusedFull() > 0);
            extra.put("every 503 carried Retry-After: 5 (" + senders.refusedFullWithRetryAfter5() + " of "
                    + senders.refusedFull() + ")", senders.refusedFullWithRetryAfter5() == senders.refusedFull());
            extra.put("the relay counted each refusal (mcpd_relay_refused_full_total " + refusedFullMetric + ")",
                    refusedFullMetric == senders.refusedFull());
            extra.put("the spool never exceeded 64 KiB (max seen " + maxSpoolBytes.get() + " bytes)",
                    maxSpoolBytes.get() <= BOUND);
            String notes = String.format("%d acked and %d refused (503, Retry-After: 5) before the collector started;"
                            + " %d refusals in all (relay metric %d), each waited out; spool peak %d of %d bytes.",
                    ackedBeforeCollector, refusedBeforeCollector, senders.refusedFull(), refusedFullMetric,
                    maxSpoolBytes.get(), BOUND);
            List<String> problems = rig.verdict("e", "Spool full under load",
                    REQUESTS + " ~1 KiB requests from " + FaultRig.SENDERS + " senders to a relay with "
                            + "`--spool-max-bytes 64KiB` whose collector is down at first; it starts once every "
                            + "sender has been refused.",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario e");
        }
    }
}
