package dev.mcpd.delivery;

import dev.mcpd.config.KafkaAddress;
import dev.mcpd.config.TlsFiles;
import dev.mcpd.upstream.Upstream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.camel.AsyncProducer;
import org.apache.camel.CamelContext;
import org.apache.camel.component.kafka.KafkaConfiguration;
import org.apache.camel.component.kafka.KafkaEndpoint;
import org.apache.camel.support.service.ServiceHelper;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka clients of the relay's Kafka upstreams, each made when first needed: a camel-kafka producer per upstream
 * for its records, and an admin client per upstream for its health check (can the topic's metadata be fetched?).
 *
 * <p>The producer's settings are set here explicitly rather than left to camel-kafka's defaults, which have changed
 * between versions: {@code acks=all} and idempotence (a record counts only once every in-sync replica has it, and a
 * retry inside the producer never writes it twice), at most 5 requests in flight per broker (the most idempotence
 * keeps in order), the record's metadata returned (its partition and offset), the body as bytes, the key as text, and
 * timeouts within the relay's own delivery timeout, so that a record the broker never acknowledged fails — and goes
 * to the next upstream — rather than waiting in the producer's buffer.
 */
public final class KafkaUpstreams implements AutoCloseable {

    /** How long a record waits for others to share its request: a little batching, no noticeable latency. */
    static final int LINGER_MS = 5;
    private static final Logger LOG = LoggerFactory.getLogger(KafkaUpstreams.class);
    /** Room for a record's headers, key and framing beside the largest body the relay accepts. */
    static final int RECORD_OVERHEAD_BYTES = 64 * 1024;

    private final Duration deliveryTimeout;
    private final Duration connectTimeout;
    private final TlsFiles tls;
    private final long maxBodyBytes;
    private final Map<Integer, AsyncProducer> producers = new ConcurrentHashMap<>();
    private final Map<Integer, Admin> admins = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param deliveryTimeout a record not acknowledged within this fails (retryably)
     * @param connectTimeout  sending waits at most this for the topic's metadata
     * @param maxBodyBytes    the largest body the relay accepts: the producer sends records that large, and the broker
     *                        says whether it takes them
     * @param tls             the files a {@code kafkas://} upstream's brokers are trusted by and shown
     *                        ({@code --upstream-ca}, {@code --upstream-client-cert}/{@code -key})
     */
    public KafkaUpstreams(Duration deliveryTimeout, Duration connectTimeout, long maxBodyBytes, TlsFiles tls) {
        this.tls = tls;
        this.deliveryTimeout = deliveryTimeout;
        this.connectTimeout = connectTimeout;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** The producer of {@code upstream}'s records, started. */
    AsyncProducer producer(CamelContext camel, Upstream upstream) {
        refuseWhenClosed();
        AsyncProducer producer = producers.computeIfAbsent(upstream.order(), order -> {
            KafkaAddress address = upstream.kafka().orElseThrow();
            String clientId = "mcpd-relay-upstream-" + order;
            KafkaEndpoint endpoint = camel.getEndpoint("kafka:" + address.topic() + "?clientId=" + clientId,
                    KafkaEndpoint.class);
            KafkaConfiguration settings = endpoint.getConfiguration();
            configure(settings, address);
            try {
                AsyncProducer made = endpoint.createAsyncProducer();
                ServiceHelper.startService(made);
                // One line with the settings that decide what "delivered" means, instead of the client's own dump.
                LOG.info("upstream={} order={} kafka producer: topic={} acks={} enable.idempotence={}"
                        + " max.in.flight.requests.per.connection={} linger.ms={} delivery.timeout.ms={}"
                        + " request.timeout.ms={} max.block.ms={} max.request.size={} security.protocol={}",
                        upstream.label(), order, address.topic(), settings.getRequestRequiredAcks(),
                        settings.isEnableIdempotence(), settings.getMaxInFlightRequest(), settings.getLingerMs(),
                        settings.getDeliveryTimeoutMs(), settings.getRequestTimeoutMs(), settings.getMaxBlockMs(),
                        settings.getMaxRequestSize(), address.tls() ? "SSL" : "PLAINTEXT");
                return made;
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the Kafka producer of " + upstream.label() + ": "
                        + e.getMessage(), e);
            }
        });
        return producer;
    }

    private void configure(KafkaConfiguration settings, KafkaAddress address) {
        settings.setBrokers(address.bootstrap());
        settings.setRequestRequiredAcks("all");
        settings.setEnableIdempotence(true);
        settings.setMaxInFlightRequest(5);
        settings.setRecordMetadata(true);
        settings.setKeySerializer(StringSerializer.class.getName());
        settings.setValueSerializer(ByteArraySerializer.class.getName());
        settings.setLingerMs(LINGER_MS);
        settings.setMaxRequestSize(Math.toIntExact(Math.min(Integer.MAX_VALUE, maxBodyBytes + RECORD_OVERHEAD_BYTES)));
        int delivery = Math.toIntExact(deliveryTimeout.toMillis());
        settings.setDeliveryTimeoutMs(delivery);
        // Kafka asks delivery.timeout.ms >= linger.ms + request.timeout.ms; half leaves room for a second try.
        settings.setRequestTimeoutMs(Math.max(1, (delivery - LINGER_MS) / 2));
        settings.setMaxBlockMs(Math.toIntExact(connectTimeout.toMillis()));
        settings.setUseIterator(false);
        settings.setSynchronous(false);
        tlsSettings(address).forEach((name, value) -> settings.getAdditionalProperties().put(name, value));
    }

    /**
     * The client settings of TLS to a {@code kafkas://} upstream's brokers (none for {@code kafka://}): the authorities
     * of {@code --upstream-ca} (else the JDK's trust store) and the certificate and key of
     * {@code --upstream-client-cert}/{@code -key}, as PEM — read when the client is made, so a renewed file takes effect
     * when the relay starts again. The brokers' names are checked against their certificates.
     */
    private Map<String, Object> tlsSettings(KafkaAddress address) {
        Map<String, Object> settings = new HashMap<>();
        if (!address.tls()) {
            return settings;
        }
        settings.put("security.protocol", "SSL");
        settings.put("ssl.endpoint.identification.algorithm", "https");
        tls.upstreamCa().ifPresent(ca -> {
            settings.put("ssl.truststore.type", "PEM");
            settings.put("ssl.truststore.location", ca.toString());
        });
        tls.upstreamClientCert().ifPresent(cert -> {
            settings.put("ssl.keystore.type", "PEM");
            settings.put("ssl.keystore.certificate.chain", read(cert));
            settings.put("ssl.keystore.key", read(tls.upstreamClientKey().orElseThrow()));
        });
        return settings;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether {@code upstream}'s topic is known to its brokers: {@code Optional.empty()} when it is, else why not —
     * the broker's own reason when it answered, or that it did not. Completes within {@code timeout}.
     */
    CompletableFuture<Optional<String>> topicCheck(Upstream upstream, Duration timeout) {
        return describeTopic(upstream, timeout).handle((described, failure) -> failure == null ? Optional.<String>empty()
                        : Optional.of(KafkaFailures.describe(failure)))
                .completeOnTimeout(Optional.of("no answer within " + timeout.toMillis() + " ms"),
                        timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
    }

    /**
     * Whether the brokers say {@code upstream}'s topic does not exist (rather than not answering): asked when a
     * record waited in vain for the topic's metadata, which is what both look like to the producer.
     */
    Optional<String> unknownTopic(Upstream upstream, Duration timeout) {
        try {
            describeTopic(upstream, timeout).get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
            return Optional.empty();
        } catch (ExecutionException e) {
            return e.getCause() instanceof UnknownTopicOrPartitionException unknown
                    ? Optional.of(KafkaFailures.describe(unknown)) : Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (TimeoutException e) {
            return Optional.empty();
        }
    }

    /** The brokers' description of {@code upstream}'s topic, asked within {@code timeout}. */
    private CompletableFuture<?> describeTopic(Upstream upstream, Duration timeout) {
        // KafkaFuture's own stage refuses toCompletableFuture(): bridged by hand.
        CompletableFuture<Object> described = new CompletableFuture<>();
        try {
            String topic = upstream.kafka().orElseThrow().topic();
            admin(upstream).describeTopics(List.of(topic),
                            new DescribeTopicsOptions().timeoutMs(Math.toIntExact(timeout.toMillis())))
                    .allTopicNames().whenComplete((topics, failure) -> {
                        if (failure == null) {
                            described.complete(topics);
                        } else {
                            described.completeExceptionally(failure);
                        }
                    });
        } catch (RuntimeException e) {
            described.completeExceptionally(e);
        }
        return described;
    }

    private Admin admin(Upstream upstream) {
        refuseWhenClosed();
        Admin admin = admins.computeIfAbsent(upstream.order(), order -> {
            Properties settings = new Properties();
            settings.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, upstream.kafka().orElseThrow().bootstrap());
            settings.put(AdminClientConfig.CLIENT_ID_CONFIG, "mcpd-relay-check-" + order);
            settings.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.toIntExact(connectTimeout.toMillis()));
            settings.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, connectTimeout.toMillis());
            settings.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
            settings.putAll(tlsSettings(upstream.kafka().orElseThrow()));
            return Admin.create(settings);
        });
        return admin;
    }

    /** Once the relay stops, no client is made again (the attempt fails, and its entry stays spooled). */
    private void refuseWhenClosed() {
        if (closed) {
            throw new IllegalStateException("the relay is stopping");
        }
    }

    /** Stops every producer (records still in its buffer fail, and their entries stay spooled) and admin client. */
    @Override
    public void close() {
        closed = true;
        producers.values().forEach(ServiceHelper::stopAndShutdownService);
        producers.clear();
        admins.values().forEach(admin -> admin.close(Duration.ofSeconds(1)));
        admins.clear();
    }
}
