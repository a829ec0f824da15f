package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;

import dev.mcpd.it.PackagedJar;
import dev.mcpd.testing.TestKafka;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenarios k1 and k2: Kafka between the relay and the collectors. The relay delivers every entry to a topic of a
 * real broker (KRaft, in the test's JVM); collectors consume it as one group ({@code --source}). Under load the
 * broker is stopped and started again on its log, the relay is killed with SIGKILL mid-delivery, a collector is killed
 * with SIGKILL mid-batch and the group rebalances: every acknowledged request is archived exactly once.
 */
class KafkaBetweenIT extends FaultScenario {

    static final int PARTITIONS = 4;
    /** 3000 requests over 15 s: the faults come while requests arrive and entries are delivered and archived. */
    static final Duration PACE = Duration.ofMillis(5);
    static final int REQUESTS = 3000;

    /** Scenario {@code id}: its topic (named {@code id}) on {@code kafka}, {@code collectors} consuming it, started. */
    private FaultRig throughKafka(TestKafka kafka, String id, String title, int collectors) throws Exception {
        kafka.createTopic(id, PARTITIONS, Map.of());
        return scenario(id, title).throughKafka(kafka, id, collectors).requests(REQUESTS).paced(PACE).start();
    }

    @Test
    void theBrokerRestartedAndTheRelayKilledMidDeliveryLoseNothingAndStoreNothingTwice(@TempDir Path brokerDir)
            throws Exception {
        try (TestKafka kafka = TestKafka.start(brokerDir);
             FaultRig rig = throughKafka(kafka, "k1", "Kafka between: broker restart and relay kill -9 under load",
                     1)) {
            Senders senders = rig.startLoad();
            await().atMost(Duration.ofSeconds(120)).until(() -> senders.settledCount() >= REQUESTS / 4);
            int ackedAtStop = senders.acknowledgedCount();
            kafka.stop();
            long stoppedAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(60)).until(() -> senders.acknowledgedCount() >= ackedAtStop + 600);
            int ackedWhileDown = senders.acknowledgedCount() - ackedAtStop;
            kafka.restart();
            long downMillis = (System.nanoTime() - stoppedAt) / 1_000_000;

            await().atMost(Duration.ofSeconds(120)).until(() -> senders.settledCount() >= REQUESTS * 2 / 3);
            PackagedJar relay = rig.relay();
            await("entries out for delivery").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(2))
                    .until(() -> outForDelivery(relay) >= 4);
            int outAtKill = outForDelivery(relay);
            int ackedAtKill = senders.acknowledgedCount();
            rig.kill9Relay();
            rig.startRelay();
            rig.awaitLoad(Duration.ofSeconds(180));
            FaultRig.Counts counts = rig.settle();

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the relay accepted requests while the broker was down", ackedWhileDown > 0);
            rig.assertHolds(REQUESTS + " requests from " + FaultRig.SENDERS + " senders; relay → Kafka topic ("
                    + PARTITIONS + " partitions, one broker) → one collector consuming it. At a quarter of the"
                    + " load the broker is stopped, and started again on its log once 600 more requests were"
                    + " acknowledged; at two thirds the relay is killed with SIGKILL while entries are out for"
                    + " delivery, and restarted on its spool.", counts, extra,
                    "Broker down " + downMillis + " ms from " + ackedAtStop + " acked (" + ackedWhileDown
                            + " acknowledged meanwhile, spooled); SIGKILL of the relay at " + ackedAtKill
                            + " acked with " + outAtKill + " entries out for delivery; topic holds "
                            + kafka.recordCount("k1") + " records (re-sends after the kill included).");
        }
    }

    @Test
    void aCollectorKilledMidBatchAndTheRebalancesLoseNothingAndStoreNothingTwice(@TempDir Path brokerDir)
            throws Exception {
        try (TestKafka kafka = TestKafka.start(brokerDir);
             FaultRig rig = throughKafka(kafka, "k2", "Kafka between: collector kill -9 and rebalances under load",
                     2)) {
            Senders senders = rig.startLoad();
            List<String> events = new ArrayList<>();
            await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> senders.settledCount()
                    >= REQUESTS / 3 && Readings.stats(rig.collector(0)).path("events").asLong() >= REQUESTS / 4);
            events.add("SIGKILL of collector 2 at " + senders.acknowledgedCount() + " acked, "
                    + Readings.stats(rig.collector(0)).path("events").asLong() + " archived");
            rig.kill9Collector(1);
            await().atMost(Duration.ofSeconds(120)).until(() -> senders.settledCount() >= REQUESTS * 2 / 3);
            int ackedAtRestart = senders.acknowledgedCount();
            rig.startCollector(1);
            events.add("collector 2 started again at " + ackedAtRestart + " acked");
            rig.awaitLoad(Duration.ofSeconds(180));
            FaultRig.Counts counts = rig.settle();
            rig.assertHolds(REQUESTS + " requests from " + FaultRig.SENDERS + " senders; relay → Kafka topic ("
                    + PARTITIONS + " partitions) → two collectors in one consumer group on one archive. At a"
                    + " third of the load collector 2 is killed with SIGKILL (its partitions go to collector 1"
                    + " once the group notices); at two thirds it starts again and the group rebalances.",
                    counts, Map.of(), String.join("; ", events) + ".");
        }
    }

    private static int outForDelivery(PackagedJar relay) {
        try {
            return Readings.relayStatus(relay).path("spool").path("outForDelivery").asInt();
        } catch (Exception e) {
            return -1;
        }
    }
}
