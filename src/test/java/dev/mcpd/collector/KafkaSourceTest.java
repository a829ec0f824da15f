package dev.mcpd.collector;

import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.testing.TestKafka;
import dev.mcpd.wire.KafkaRecordHeaders;
import dev.mcpd.wire.SenderDigest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A collector that consumes a Kafka topic ({@code --source}) archives each record as the request its headers describe,
 * once per idempotency key, commits offsets after its store did, skips (and counts, and names) records that describe
 * no request, and says {@code degraded} while its brokers cannot be reached.
 */
@ExtendWith(TestKafka.Shared.class)
class KafkaSourceTest {

    /** A native batch of no events: the smallest request the collector archives. */
    private static final byte[] EMPTY = "{\"events\":[]}".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private static String topic(TestKafka kafka, int partitions) {
        String topic = "source-" + UUID.randomUUID();
        kafka.createTopic(topic, partitions, Map.of());
        return topic;
    }

    private RunningCollector collector(TestKafka kafka, String topic, String group) {
        return RunningCollector.start(dir, Map.of("MCPD_SOURCE", "kafka://" + kafka.bootstrap() + "/" + topic,
                "MCPD_SOURCE_GROUP", group));
    }

    /** A record as the relay writes it. */
    static ProducerRecord<String, byte[]> record(String topic, String target, String contentType, String encoding,
                                                 String key, long receivedAt, byte[] body) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key, body);
        KafkaRecordHeaders.of("POST", target, contentType, encoding, key, receivedAt)
                .forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        return record;
    }

    static void send(TestKafka kafka, List<ProducerRecord<String, byte[]>> records) throws Exception {
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap(), ProducerConfig.ACKS_CONFIG, "all"),
                new StringSerializer(), new ByteArraySerializer())) {
            for (ProducerRecord<String, byte[]> record : records) {
                producer.send(record).get();
            }
        }
    }

    private static String metrics(RunningCollector collector) {
        return CollectorHttp.get(collector.uri("/metrics")).body();
    }

    @Test
    void aRecordFromARelayWhoseClockIsThirtyDaysBehindIsArchivedAsReceivedNowNotAMonthAgo(TestKafka kafka)
            throws Exception {
        String topic = topic(kafka, 1);
        long relayNow = System.currentTimeMillis() - Duration.ofDays(30).toMillis();
        ProducerRecord<String, byte[]> late = record(topic, "/v1/ingest", "application/json", "", "late-clock",
                relayNow - 5, EMPTY);
        // The relay's producer stamps the record's create time by the same clock as its receive time.
        ProducerRecord<String, byte[]> stamped = new ProducerRecord<>(topic, null, relayNow, late.key(), late.value(),
                late.headers());
        long sent = System.currentTimeMillis();
        send(kafka, List.of(stamped));
        try (RunningCollector collector = collector(kafka, topic, "group-" + UUID.randomUUID())) {
            await().atMost(PATIENCE).until(() -> StoredBatches.withKey(collector.dataFile(), "late-clock")
                    .isPresent());
            long read = System.currentTimeMillis();
            long archived = StoredBatches.withKey(collector.dataFile(), "late-clock").orElseThrow()
                    .receivedAtMillis();
            assertTrue(archived >= sent - 5 && archived <= read, "held 5 ms by the relay, read by the collector"
                    + " between " + sent + " and " + read + ": archived " + archived);
        }
    }

    @Test
    void eachRecordIsArchivedAsTheRequestItsHeadersDescribeOncePerKey(TestKafka kafka) throws Exception {
        String topic = topic(kafka, 2);
        byte[] events = "{\"events\":[{\"a\":1},{\"b\":2}]}".getBytes(StandardCharsets.UTF_8);
        byte[] otlp = {0x0a, 0x02, 0x01, 0x02, (byte) 0xff};
        long receivedAt = System.currentTimeMillis() - 60_000;
        long sent = System.currentTimeMillis();
        send(kafka, List.of(
                record(topic, "/v1/ingest", "application/json", "", "native-1", receivedAt, events),
                record(topic, "/v1/traces?tenant=a", "application/x-protobuf", "", "otlp-1", receivedAt, otlp),
                record(topic, "/v1/ingest", "application/json", "", "native-1", receivedAt, events)));
        try (RunningCollector collector = collector(kafka, topic, "group-" + UUID.randomUUID())) {
            await().atMost(PATIENCE).until(() -> metrics(collector).contains(
                    "mcpd_collector_source_records_total{outcome=\"duplicate\"} 1.0"));
            StoredBatches.Row nativeRow = StoredBatches.withKey(collector.dataFile(), "native-1").orElseThrow();
            assertArrayEquals(events, nativeRow.body());
            assertEquals(2, nativeRow.events());
            assertEquals("application/json", nativeRow.contentType());
            long read = System.currentTimeMillis();
            // The 60 s the relay held it (the record's create time less its receive time, both the relay's clock),
            // counted back from when the collector read it.
            assertTrue(Math.abs(nativeRow.receivedAtMillis() - receivedAt) <= read - sent,
                    "the relay's receive time is kept, within the record's trip: " + (nativeRow.receivedAtMillis()
                            - receivedAt) + " ms off");
            StoredBatches.Row otlpRow = StoredBatches.withKey(collector.dataFile(), "otlp-1").orElseThrow();
            assertArrayEquals(otlp, otlpRow.body());
            assertEquals("/v1/traces?tenant=a", otlpRow.target());
            assertEquals(Map.of("native-1", 1, "otlp-1", 1), StoredBatches.countsByKey(collector.dataFile()));
            String scrape = metrics(collector);
            assertTrue(scrape.contains("mcpd_collector_source_records_total{outcome=\"archived\"} 2.0"), scrape);
            assertTrue(scrape.contains("mcpd_ingest_accepted_total{path=\"/v1/ingest\"} 2.0"), scrape);
            assertEquals(200, CollectorHttp.get(collector.uri("/readyz")).statusCode());
            assertEquals("ok", CollectorHttp.get(collector.uri("/readyz")).body().strip());
        }
    }

    @Test
    void offsetsAreCommittedOnlyForWhatTheStoreKeptAndARestartGoesOnFromThem(TestKafka kafka) throws Exception {
        String topic = topic(kafka, 1);
        String group = "group-" + UUID.randomUUID();
        send(kafka, List.of(record(topic, "/v1/ingest", "application/json", "", "first", 1, EMPTY)));
        try (RunningCollector collector = collector(kafka, topic, group)) {
            await().atMost(PATIENCE).until(() -> committed(kafka, group, topic) == 1);
            assertTrue(StoredBatches.withKey(collector.dataFile(), "first").isPresent());
        }
        send(kafka, List.of(record(topic, "/v1/ingest", "application/json", "", "second", 1, EMPTY)));
        try (RunningCollector collector = collector(kafka, topic, group)) {
            await().atMost(PATIENCE).until(() -> committed(kafka, group, topic) == 2);
            assertEquals(Map.of("first", 1, "second", 1), StoredBatches.countsByKey(collector.dataFile()));
            assertTrue(metrics(collector).contains("mcpd_collector_source_records_total{outcome=\"archived\"} 1.0"),
                    "the restarted collector read only the record after the committed offset");
        }
    }

    @Test
    void aRecordThatDescribesNoRequestIsCountedSkippedAndNamedNeverRetried(TestKafka kafka) throws Exception {
        String topic = topic(kafka, 1);
        ProducerRecord<String, byte[]> bare = new ProducerRecord<>(topic, "bare", EMPTY);
        ProducerRecord<String, byte[]> elsewhere = record(topic, "/admin", "application/json", "", "elsewhere", 1,
                EMPTY);
        ProducerRecord<String, byte[]> broken = record(topic, "/v1/ingest", "application/json", "", "broken", 1,
                "{\"events\":".getBytes(StandardCharsets.UTF_8));
        ProducerRecord<String, byte[]> good = record(topic, "/v1/ingest", "application/json", "", "good", 1,
                EMPTY);
        send(kafka, List.of(bare, elsewhere, broken, good));
        String group = "group-" + UUID.randomUUID();
        try (CapturedLog log = new CapturedLog();
             RunningCollector collector = collector(kafka, topic, group)) {
            await().atMost(PATIENCE).until(() -> metrics(collector).contains(
                    "mcpd_collector_source_records_total{outcome=\"refused\"} 3.0"));
            await().atMost(PATIENCE).until(() -> StoredBatches.withKey(collector.dataFile(), "good").isPresent());
            assertEquals(Map.of("good", 1), StoredBatches.countsByKey(collector.dataFile()));
            List<String> lines = log.events("dev.mcpd.source.KafkaSource", Level.WARN).stream()
                    .map(e -> e.getFormattedMessage()).toList();
            assertTrue(lines.stream().anyMatch(l -> l.contains("partition=0 offset=0 skipped, kept in the topic: ")),
                    lines.toString());
            await().atMost(PATIENCE).until(() -> committed(kafka, group, topic) == 4);
            assertTrue(log.events("org.apache.kafka.clients.consumer.ConsumerConfig", Level.INFO).isEmpty(),
                    "no dump of the client's settings");
            assertEquals(1, log.events("dev.mcpd.source.KafkaSource", Level.INFO).stream()
                    .map(e -> e.getFormattedMessage()).filter(l -> l.contains(" group=" + group + " consuming:")
                            && l.contains("enable.auto.commit=false") && l.contains("isolation.level=read_committed"))
                    .count(), "the settings that matter, in one line");
        }
    }

    @Test
    void keysBelongToTheSenderARecordNamesAsOverHttp(TestKafka kafka) throws Exception {
        // Two tenants pick the same key: over HTTP both are stored; through the topic too.
        String topic = topic(kafka, 1);
        byte[] a = "{\"events\":[{\"tenant\":\"a\"}]}".getBytes(StandardCharsets.UTF_8);
        byte[] b = "{\"events\":[{\"tenant\":\"b\"}]}".getBytes(StandardCharsets.UTF_8);
        ProducerRecord<String, byte[]> fromA = record(topic, "/v1/ingest", "application/json", "", "same", 1, a);
        fromA.headers().add(KafkaRecordHeaders.SENDER, SenderDigest.of("tenant-a").getBytes(StandardCharsets.UTF_8));
        ProducerRecord<String, byte[]> fromB = record(topic, "/v1/ingest", "application/json", "", "same", 1, b);
        fromB.headers().add(KafkaRecordHeaders.SENDER, SenderDigest.of("tenant-b").getBytes(StandardCharsets.UTF_8));
        ProducerRecord<String, byte[]> againA = record(topic, "/v1/ingest", "application/json", "", "same", 1, a);
        againA.headers().add(KafkaRecordHeaders.SENDER, SenderDigest.of("tenant-a").getBytes(StandardCharsets.UTF_8));
        ProducerRecord<String, byte[]> lying = record(topic, "/v1/ingest", "application/json", "", "other", 1, a);
        lying.headers().add(KafkaRecordHeaders.SENDER, "tenant-a".getBytes(StandardCharsets.UTF_8));
        send(kafka, List.of(fromA, fromB, againA, lying));
        String group = "group-" + UUID.randomUUID();
        try (RunningCollector collector = collector(kafka, topic, group)) {
            await().atMost(PATIENCE).until(() -> committed(kafka, group, topic) == 4);
            Map<String, Integer> stored = StoredBatches.countsByKey(collector.dataFile());
            ReliabilityReport.assertHostile("a3-h7", "two tenants send one Idempotency-Key through a Kafka topic"
                            + " (each record naming its sender's digest), then the first sends it again",
                    "each tenant's request stored once; the first's copy a duplicate, as over HTTP",
                    "stored per key " + stored, stored.equals(Map.of("same", 2)));
            String scrape = metrics(collector);
            assertTrue(scrape.contains("mcpd_collector_source_records_total{outcome=\"duplicate\"} 1.0"), scrape);
            assertTrue(scrape.contains("mcpd_collector_source_records_total{outcome=\"refused\"} 1.0"),
                    "a sender that is not a digest is refused: " + scrape);
        }
    }

    @Test
    void aRecordWithANulInItsContentTypeIsSkippedAndTheSourceGoesOnOnPostgres(TestKafka kafka) throws Exception {
        // PostgreSQL refuses a NUL in text for good: taken for a store that is not answering, the record was read
        // again for ever and nothing after it was archived.
        TestPostgres postgres = TestPostgres.require();
        String schema = postgres.createSchema("mcpd_source_");
        try {
            String topic = topic(kafka, 1);
            send(kafka, List.of(record(topic, "/v1/ingest", "application/json\u0000x", "", "nul", 1, EMPTY),
                    record(topic, "/v1/ingest", "application/json", "", "after", 1, EMPTY)));
            String group = "group-" + UUID.randomUUID();
            try (RunningCollector collector = RunningCollector.start(dir, Map.of("MCPD_SOURCE", "kafka://"
                    + kafka.bootstrap() + "/" + topic, "MCPD_SOURCE_GROUP", group, "MCPD_DATA", postgres.url(schema)))) {
                await().atMost(PATIENCE).until(() -> committed(kafka, group, topic) == 2);
                String scrape = metrics(collector);
                boolean refused = scrape.contains("mcpd_collector_source_records_total{outcome=\"refused\"} 1.0");
                boolean archived = scrape.contains("mcpd_collector_source_records_total{outcome=\"archived\"} 1.0");
                ReliabilityReport.assertHostile("a3-h3", "a Kafka record whose content-type header holds a NUL, then"
                                + " a good one, consumed by a collector on PostgreSQL",
                        "the record skipped (400, kept in the topic), the next archived, both offsets committed",
                        "2 offsets committed; refused " + (refused ? "1" : "NOT 1") + "; archived "
                                + (archived ? "1" : "NOT 1"), refused && archived);
            }
        } finally {
            postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    @Test
    void whileTheStoreKeepsNothingNoOffsetIsCommittedAndTheRecordIsReadAgainOnceItDoes(TestKafka kafka)
            throws Exception {
        String topic = topic(kafka, 1);
        String group = "group-" + UUID.randomUUID();
        Path folder = dir.resolve("store");
        try (CapturedLog log = new CapturedLog();
             RunningCollector collector = RunningCollector.startOn(folder.resolve("mcpd.db"), Map.of("MCPD_SOURCE",
                     "kafka://" + kafka.bootstrap() + "/" + topic, "MCPD_SOURCE_GROUP", group))) {
            try (Stream<Path> files = Files.walk(folder)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
            send(kafka, List.of(record(topic, "/v1/ingest", "application/json", "", "while-gone", 1, EMPTY)));
            await().atMost(PATIENCE).until(() -> log.events("dev.mcpd.source.KafkaSource", Level.WARN).stream()
                    .anyMatch(e -> e.getFormattedMessage().contains("store not answering, 1 records read again")));
            assertEquals(-1, committed(kafka, group, topic), "no offset committed for a record the store did not keep");

            Files.createDirectories(folder);
            await().atMost(PATIENCE).until(() -> committed(kafka, group, topic) == 1);
            assertEquals(Map.of("while-gone", 1), StoredBatches.countsByKey(collector.dataFile()),
                    "read again and archived in the store that is back");
        }
    }

    @Test
    void aTopicThatDoesNotExistIsSaidSoUntilItIsCreated(TestKafka kafka) throws Exception {
        String topic = "missing-" + UUID.randomUUID();
        String group = "group-" + UUID.randomUUID();
        try (RunningCollector collector = collector(kafka, topic, group)) {
            await().atMost(PATIENCE).until(() -> CollectorHttp.get(collector.uri("/readyz")).body().strip().equals(
                    "degraded: the Kafka source has no topic " + topic + " on its brokers (they answer): create it,"
                            + " the collector never does"));
            kafka.createTopic(topic, 1, Map.of());
            await().atMost(PATIENCE).until(() -> CollectorHttp.get(collector.uri("/readyz")).body().strip()
                    .equals("ok"));
            send(kafka, List.of(record(topic, "/v1/ingest", "application/json", "", "created", 1, EMPTY)));
            await().atMost(PATIENCE).until(() -> StoredBatches.withKey(collector.dataFile(), "created").isPresent());
        }
    }

    @Test
    void whileItsBrokersCannotBeReachedTheCollectorSaysDegraded(@TempDir Path brokerDir) throws Exception {
        try (TestKafka kafka = TestKafka.start(brokerDir)) {
            String topic = topic(kafka, 1);
            try (RunningCollector collector = collector(kafka, topic, "group-" + UUID.randomUUID())) {
                await().atMost(PATIENCE).until(() -> CollectorHttp.get(collector.uri("/readyz")).body().strip()
                        .equals("ok"));
                kafka.stop();
                await().atMost(PATIENCE).until(() -> CollectorHttp.get(collector.uri("/readyz")).body()
                        .startsWith("degraded: the Kafka source is unreachable: "));
                assertEquals(200, CollectorHttp.get(collector.uri("/readyz")).statusCode(), "HTTP ingest still works");
                kafka.restart();
                await().atMost(PATIENCE).until(() -> CollectorHttp.get(collector.uri("/readyz")).body().strip()
                        .equals("ok"));
                send(kafka, List.of(record(topic, "/v1/ingest", "application/json", "", "after", 1,
                        EMPTY)));
                await().atMost(PATIENCE).until(() -> StoredBatches.withKey(collector.dataFile(), "after")
                        .isPresent());
            }
        }
    }

    /** The group's committed offset of the topic's partition 0 (-1 when none). */
    static long committed(TestKafka kafka, String group, String topic) throws Exception {
        try (var admin = kafka.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            OffsetAndMetadata offset = offsets.get(new TopicPartition(topic, 0));
            return offset == null ? -1 : offset.offset();
        }
    }
}
