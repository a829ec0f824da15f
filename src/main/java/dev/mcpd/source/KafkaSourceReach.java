package dev.mcpd.source;

import dev.mcpd.config.KafkaAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the Kafka source's brokers can be reached and hold its topic: every few seconds, on a thread of its own
 * (the consumer's may be held by a poll or a store transaction), it asks them for the topic. {@code /readyz} says the
 * collector is degraded while they do not answer or the topic does not exist; one log line at each change.
 */
final class KafkaSourceReach implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaSource.class);
    static final Duration EVERY = Duration.ofSeconds(5);
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(3);
    private static final String NOT_YET = "is not yet checked";

    private final KafkaAddress address;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(run -> {
        Thread checker = new Thread(run, "mcpd-kafka-source-check");
        checker.setDaemon(true);
        return checker;
    });
    private volatile Optional<String> unreachable = Optional.of(NOT_YET);
    private Admin admin;

    KafkaSourceReach(KafkaAddress address) {
        this.address = address;
    }

    void start() {
        thread.scheduleWithFixedDelay(this::check, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * What keeps the source from its records, said of it ("is unreachable: …", "has no topic … on its brokers …"),
     * while something does (and before the first check).
     */
    Optional<String> unreachable() {
        return unreachable;
    }

    private void check() {
        if (admin == null) {
            Properties settings = new Properties();
            settings.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, address.bootstrap());
            settings.put(AdminClientConfig.CLIENT_ID_CONFIG, "mcpd-serve-source-check");
            settings.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.toIntExact(ANSWER_WITHIN.toMillis()));
            settings.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
            admin = Admin.create(settings);
        }
        Optional<String> now;
        try {
            admin.describeTopics(List.of(address.topic()),
                            new DescribeTopicsOptions().timeoutMs(Math.toIntExact(ANSWER_WITHIN.toMillis())))
                    .allTopicNames().get(ANSWER_WITHIN.toMillis() + 1000, TimeUnit.MILLISECONDS);
            now = Optional.empty();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            now = Optional.of(cause instanceof UnknownTopicOrPartitionException
                    ? "has no topic " + address.topic() + " on its brokers (they answer): create it, the collector"
                            + " never does"
                    : "is unreachable: " + cause.getClass().getSimpleName()
                            + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        } catch (TimeoutException e) {
            now = Optional.of("is unreachable: no answer within " + (ANSWER_WITHIN.toSeconds() + 1) + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        Optional<String> before = unreachable;
        unreachable = now;
        if (before.isPresent() != now.isPresent() || before.equals(Optional.of(NOT_YET))) {
            if (now.isPresent()) {
                LOG.warn("source={} {}", address, now.get());
            } else {
                LOG.info("source={} reachable", address);
            }
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(1));
        }
    }
}
