package dev.mcpd.delivery;

import dev.mcpd.config.Secret;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.wire.KafkaRecordHeaders;
import dev.mcpd.wire.Otlp;
import dev.mcpd.wire.SenderDigest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.component.kafka.KafkaConstants;
import org.apache.camel.support.AsyncProcessorSupport;
import org.apache.camel.support.DefaultExchange;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Sends one attempt to a Kafka upstream: the entry as one record — the body bytes exactly as the value, the
 * idempotency key as the key (so a re-send lands on the same partition), the request described in the record's
 * headers ({@link KafkaRecordHeaders}) — and its acknowledgement, once every in-sync replica has the record, as an
 * {@link UpstreamAnswer} on the exchange. The record is made on an exchange of its own, from the stored request alone:
 * no header of the delivery exchange, and no credential, can reach the topic.
 *
 * <p>An acknowledged record answers 200, with the answer a sender waiting for its entry gets: for an OTLP export the
 * empty answer an OTLP collector gives, else the record's topic, partition and offset as JSON. A record the broker
 * refuses for good answers {@link KafkaFailures.Refused}; any other failure is retried elsewhere.
 */
public final class UpstreamKafka extends AsyncProcessorSupport {

    private final KafkaUpstreams clients;
    private final Duration checkTimeout;
    /** The digest of {@code --upstream-key}: with it, every record presents the relay's key, as over HTTP. */
    private final Optional<String> upstreamKeySender;

    /**
     * @param checkTimeout how long to ask the brokers whether a topic whose metadata never came exists
     * @param upstreamKey  {@code --upstream-key}: the sender every record names, as an HTTP upstream would see it
     */
    public UpstreamKafka(KafkaUpstreams clients, Duration checkTimeout, Optional<Secret> upstreamKey) {
        this.clients = clients;
        this.checkTimeout = checkTimeout;
        this.upstreamKeySender = upstreamKey.map(key -> SenderDigest.of(key.reveal()));
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        Upstream upstream = DeliveryExchange.upstream(exchange);
        SpoolRequest request = DeliveryExchange.entry(exchange).request();
        Exchange record = new DefaultExchange(exchange.getContext());
        Message message = record.getIn();
        message.setBody(request.body());
        message.setHeader(KafkaConstants.KEY, request.idempotencyKey());
        KafkaRecordHeaders.of(request.method(), request.target(), request.contentType(), request.contentEncoding(),
                request.idempotencyKey(), request.receivedAtMillis()).forEach(message::setHeader);
        upstreamKeySender.or(() -> request.credential().map(c -> SenderDigest.of(SenderDigest.credentialOf(
                c.header(), c.value())))).ifPresent(sender -> message.setHeader(KafkaRecordHeaders.SENDER, sender));
        request.forwarded().forEach(header -> message.setHeader(header.name(), header.value()));
        try {
            return clients.producer(exchange.getContext(), upstream).process(record, doneSync -> {
                DeliveryExchange.setAnswer(exchange, answerTo(record, upstream, request));
                callback.done(doneSync);
            });
        } catch (RuntimeException e) {
            DeliveryExchange.setAnswer(exchange, UpstreamAnswer.failed(e));
            callback.done(true);
            return true;
        }
    }

    private UpstreamAnswer answerTo(Exchange record, Upstream upstream, SpoolRequest request) {
        Exception failure = record.getException();
        if (failure != null) {
            Optional<String> refused = KafkaFailures.refusedForGood(failure);
            if (refused.isEmpty() && KafkaFailures.metadataMissing(failure)) {
                refused = clients.unknownTopic(upstream, checkTimeout);
            }
            String topic = upstream.kafka().orElseThrow().topic();
            return UpstreamAnswer.failed(refused.<Exception>map(why -> new KafkaFailures.Refused("topic " + topic
                    + ": " + why)).orElse(failure));
        }
        String path = request.target().indexOf('?') < 0 ? request.target()
                : request.target().substring(0, request.target().indexOf('?'));
        if (Otlp.isExportPath(path)) {
            return new UpstreamAnswer(200, Otlp.answerContentType(request.contentType()), null,
                    Otlp.emptyAnswer(request.contentType()), null);
        }
        return new UpstreamAnswer(200, "application/json", null, placed(record), null);
    }

    /** {@code {"topic":…,"partition":…,"offset":…}} of the acknowledged record. */
    private static byte[] placed(Exchange record) {
        @SuppressWarnings("unchecked")
        List<RecordMetadata> metadata = record.getMessage().getHeader(KafkaConstants.KAFKA_RECORD_META, List.class);
        if (metadata == null || metadata.isEmpty() || metadata.get(0) == null) {
            return "{}".getBytes(StandardCharsets.UTF_8);
        }
        RecordMetadata placed = metadata.get(0);
        // A topic's name is letters, digits, '.', '_' and '-': nothing to escape.
        return ("{\"topic\":\"" + placed.topic() + "\",\"partition\":" + placed.partition() + ",\"offset\":"
                + placed.offset() + "}").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    protected void doStop() {
        clients.close();
    }
}
