package dev.mcpd.source;

import dev.mcpd.config.KafkaAddress;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.logs.SenderText;
import dev.mcpd.store.Archived;
import dev.mcpd.store.ReadEntry;
import dev.mcpd.store.Sender;
import dev.mcpd.store.StoreUnavailable;
import dev.mcpd.wire.KafkaRecordHeaders;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.SenderDigest;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector's Kafka source ({@code --source}): consumes the topic as a member of {@code --source-group} and
 * archives each record as the request its headers describe ({@link KafkaRecordHeaders}), judged as the same request
 * sent alone would be and deduplicated by its idempotency key. What one poll returned is archived in one store
 * transaction, and only then are those offsets committed: a collector killed between the two reads the records again
 * (or another member does, after a rebalance), and their keys make the second copy a duplicate. When the store does
 * not answer, the consumer goes back to the first offset it has not committed and tries again, with a growing pause.
 *
 * <p>{@link KafkaSourceReach} says, on a thread of its own, whether the brokers can be reached.
 *
 * <p>A record that can never be archived — headers that describe no ingest request, a body refused — is counted and
 * skipped with one log line naming its partition and offset: it stays in the topic, where an operator reads it, for
 * the topic's retention.
 *
 * <p>Why a loop on kafka-clients' consumer rather than camel-kafka's: the contract is "one store transaction per poll,
 * commit after it, and on a failed transaction read the same records again". camel-kafka's batching consumer hands a
 * failed batch to its exception handler and continues with the next poll unless breakOnFirstError is set, and its
 * manual commits follow each exchange rather than the store's transaction; a loop of its own states the contract in
 * one place, where the tests hold it.
 */
public final class KafkaSource implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaSource.class);
    private static final Duration POLL = Duration.ofMillis(500);
    private static final Duration MAX_PAUSE = Duration.ofSeconds(10);
    /** Kafka's default is 45 s: a collector that died would hold its partitions that long. */
    static final int SESSION_TIMEOUT_MS = 10_000;
    static final int MAX_POLL_RECORDS = 500;

    private final KafkaAddress address;
    private final String group;
    private final SourceArchive archive;
    private final RecordReader reader;
    private final SourceMetrics metrics;
    private final InstantSource clock;
    private final RateLimitedLog warnings = new RateLimitedLog(LOG, Duration.ofSeconds(10));
    private final Map<Integer, Long> lag = new ConcurrentHashMap<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final CountDownLatch stopRequested = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private final KafkaSourceReach reach;
    private volatile Thread thread;

    public KafkaSource(KafkaAddress address, String group, SourceArchive archive, RecordReader reader,
                       MeterRegistry registry, InstantSource clock) {
        this.address = address;
        this.group = group;
        this.archive = archive;
        this.reader = reader;
        this.metrics = new SourceMetrics(registry, lag);
        this.clock = clock;
        this.reach = new KafkaSourceReach(address);
    }

    /** Starts consuming on a thread of its own. */
    public void start() {
        reach.start();
        thread = new Thread(this::run, "mcpd-kafka-source");
        thread.setDaemon(true);
        thread.start();
        // One line with the settings that decide what is archived when, instead of the client's own dump.
        LOG.info("source={} group={} consuming: enable.auto.commit=false (after the store's transaction)"
                + " auto.offset.reset=earliest isolation.level=read_committed allow.auto.create.topics=false"
                + " max.poll.records={} session.timeout.ms={}", address, group, MAX_POLL_RECORDS, SESSION_TIMEOUT_MS);
    }

    /** Why the brokers cannot be reached, while they cannot: {@code /readyz} says the collector is degraded. */
    public Optional<String> unreachable() {
        return reach.unreachable();
    }

    private void run() {
        try (KafkaConsumer<byte[], byte[]> made = new KafkaConsumer<>(settings(), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer = made;
            made.subscribe(List.of(address.topic()), new Rebalance());
            int failures = 0;
            while (!stopping) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = made.poll(POLL);
                } catch (WakeupException e) {
                    break;
                }
                noteLag(made);
                if (records.isEmpty()) {
                    continue;
                }
                try {
                    archive(records);
                } catch (StoreUnavailable e) {
                    failures++;
                    warnings.warn("store", "source=" + address + " store not answering, " + records.count()
                            + " records read again: " + e.getMessage());
                    rewind(made, records);
                    pause(failures);
                    continue;
                }
                failures = 0;
                commit(made, records);
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            LOG.error("source={} group={} stopped: {}", address, group, e.toString());
        } finally {
            stopped.countDown();
        }
    }

    private Map<String, Object> settings() {
        Map<String, Object> settings = new HashMap<>();
        settings.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, address.bootstrap());
        settings.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        settings.put(ConsumerConfig.CLIENT_ID_CONFIG, "mcpd-serve-source");
        // Offsets are committed by hand, after the store's transaction; a new group starts at the oldest record.
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // A missing topic is the operator's to create (with its partitions and replication): never by a subscription.
        settings.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        settings.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, MAX_POLL_RECORDS);
        settings.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_TIMEOUT_MS);
        settings.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, SESSION_TIMEOUT_MS / 3);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        settings.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
        return settings;
    }

    /**
     * Archives what the poll returned, one store transaction per sender (keys belong to the sender the record names,
     * as over HTTP); records that can never be archived are skipped.
     */
    private void archive(ConsumerRecords<byte[], byte[]> records) {
        long now = clock.millis();
        Map<Sender, List<ReadEntry>> bySender = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            Optional<String> named = header(record, KafkaRecordHeaders.SENDER);
            ReadEntry judged = named.isPresent() && !SenderDigest.isDigest(named.get())
                    ? ReadEntry.refused(400, KafkaRecordHeaders.SENDER + " is not a SHA-256 digest")
                    : reader.read(requestOf(record), now);
            if (judged.batch().isPresent()) {
                bySender.computeIfAbsent(named.map(Sender::new).orElse(Sender.NONE), s -> new ArrayList<>())
                        .add(judged);
            } else {
                metrics.record("refused");
                warnings.warn("refused-" + record.partition(), "source=" + address + " partition="
                        + record.partition() + " offset=" + record.offset() + " skipped, kept in the topic: "
                        + judged.refusedStatus() + " " + SenderText.quote(judged.refusedReason()));
            }
        }
        for (Map.Entry<Sender, List<ReadEntry>> group : bySender.entrySet()) {
            List<ReadEntry> readable = group.getValue();
            List<Archived> archived = archive.archive(group.getKey(), readable.stream()
                    .map(e -> e.batch().orElseThrow()).toList());
            for (Archived what : archived) {
                metrics.record(what.accepted() == 0 && what.duplicate() > 0 ? "duplicate" : "archived");
            }
        }
    }

    /** The request a record describes; a missing header makes a request the judgement refuses. */
    static RelayBatch.Entry requestOf(ConsumerRecord<byte[], byte[]> record) {
        String key = header(record, KafkaRecordHeaders.IDEMPOTENCY_KEY)
                .orElseGet(() -> record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8));
        long receivedAt;
        try {
            receivedAt = Long.parseLong(header(record, KafkaRecordHeaders.RECEIVED_AT).orElse("0"));
        } catch (NumberFormatException e) {
            receivedAt = 0; // the collector's own time of reading it
        }
        return new RelayBatch.Entry(header(record, KafkaRecordHeaders.METHOD).orElse(""),
                header(record, KafkaRecordHeaders.TARGET).orElse(""),
                header(record, KafkaRecordHeaders.CONTENT_TYPE).orElse(""),
                header(record, KafkaRecordHeaders.CONTENT_ENCODING).orElse(""), key, receivedAt,
                record.value() == null ? new byte[0] : record.value(), Map.of(), held(record, receivedAt));
    }

    /**
     * How long the relay had held the record when it produced it: its create time less its receive time, both read
     * by the relay's clock — so the relay's clock being days off does not make it old or new here. Its age in the
     * topic is not counted (the broker's clock is a third one): retention counts from when the collector read it, less
     * that. Not said for a record the broker timed itself, or one without a receive time.
     */
    static long held(ConsumerRecord<byte[], byte[]> record, long receivedAtMillis) {
        if (record.timestampType() != TimestampType.CREATE_TIME || receivedAtMillis <= 0) {
            return RelayBatch.NOT_SAID;
        }
        return Math.max(0, record.timestamp() - receivedAtMillis);
    }

    private static Optional<String> header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? Optional.empty()
                : Optional.of(new String(header.value(), StandardCharsets.UTF_8));
    }

    /** Commits the offsets after what was archived; a rebalance in between leaves them to the next owner. */
    private void commit(KafkaConsumer<byte[], byte[]> consumer, ConsumerRecords<byte[], byte[]> records) {
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (TopicPartition partition : records.partitions()) {
            List<ConsumerRecord<byte[], byte[]>> of = records.records(partition);
            next.put(partition, new OffsetAndMetadata(of.get(of.size() - 1).offset() + 1));
        }
        try {
            // No longer than the session: past it the group coordinator has dropped this member, and a commit it
            // sent would fail anyway; the client's own default (a minute) only held the next poll back.
            consumer.commitSync(next, Duration.ofMillis(SESSION_TIMEOUT_MS));
        } catch (CommitFailedException | RebalanceInProgressException e) {
            // The partitions went to another member while this one archived: it reads the records again, and their
            // keys make them duplicates.
            warnings.warn("commit", "source=" + address + " offsets not committed (the group rebalanced): the next"
                    + " owner reads " + records.count() + " records again, stored once by their keys");
        } catch (RetriableException e) {
            // The brokers did not answer in time (an outage longer than the session): the source goes on,
            // and the next commit carries these offsets too; read again before that, they are stored once by keys.
            warnings.warn("commit", "source=" + address + " offsets not committed (" + e.getClass().getSimpleName()
                    + "): the next commit carries them; " + records.count() + " records may be read again, stored"
                    + " once by their keys");
        }
    }

    /** Back to the first record of each partition not archived: the next poll returns them again. */
    private static void rewind(KafkaConsumer<byte[], byte[]> consumer, ConsumerRecords<byte[], byte[]> records) {
        for (TopicPartition partition : records.partitions()) {
            consumer.seek(partition, records.records(partition).get(0).offset());
        }
    }

    private void pause(int failures) {
        long millis = Math.min(MAX_PAUSE.toMillis(), 100L << Math.min(failures, 7));
        try {
            stopRequested.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping = true;
        }
    }

    private void noteLag(KafkaConsumer<byte[], byte[]> consumer) {
        for (TopicPartition partition : consumer.assignment()) {
            consumer.currentLag(partition).ifPresent(records -> lag.put(partition.partition(), records));
        }
        lag.keySet().removeIf(p -> !consumer.assignment().contains(new TopicPartition(address.topic(), p)));
        metrics.lagChanged();
    }

    /** Partitions taken away: their lag is another member's to report. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            partitions.forEach(p -> lag.remove(p.partition()));
            metrics.lagChanged();
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            LOG.info("source={} group={} partitions={}", address, group,
                    partitions.stream().map(TopicPartition::partition).sorted().toList());
        }
    }

    /** Stops consuming: the batch in hand is archived and committed first, or read again by the next owner. */
    @Override
    public void close() {
        stopping = true;
        stopRequested.countDown();
        reach.close();
        if (thread == null) {
            return;
        }
        KafkaConsumer<byte[], byte[]> running = consumer;
        if (running != null) {
            running.wakeup();
        }
        try {
            stopped.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
