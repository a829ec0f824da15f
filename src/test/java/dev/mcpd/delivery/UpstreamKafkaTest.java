package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.Secret;
import dev.mcpd.config.TlsFiles;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.TestKafka;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.wire.KafkaRecordHeaders;
import dev.mcpd.wire.SenderDigest;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One attempt to a Kafka topic on a real broker, the processor alone: the record made from the stored request only
 * (body, key, headers, the sender's digest — never its credential), and the broker's acknowledgement or refusal as an
 * {@link UpstreamAnswer}.
 */
@ExtendWith(TestKafka.Shared.class)
@Timeout(120)
class UpstreamKafkaTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final CamelContext camel = new DefaultCamelContext();
    private UpstreamBoard board;
    private UpstreamKafka kafkaSender;

    @AfterEach
    void stop() throws Exception {
        if (kafkaSender != null) {
            kafkaSender.stop();
        }
        if (board != null) {
            board.close();
        }
        camel.close();
    }

    private String topic(TestKafka kafka, Map<String, String> settings) {
        String topic = "unit-" + UUID.randomUUID();
        kafka.createTopic(topic, 1, settings);
        return topic;
    }

    private void sendingTo(TestKafka kafka, String topic, Optional<Secret> upstreamKey) {
        camel.start();
        board = new UpstreamBoard(List.of(URI.create("kafka://" + kafka.bootstrap() + "/" + topic)),
                UpstreamBoard.Settings.defaults(new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), () -> 0.5)),
                InstantSource.system());
        kafkaSender = new UpstreamKafka(new KafkaUpstreams(WAIT, WAIT, 1 << 20, TlsFiles.none()), WAIT, upstreamKey);
        kafkaSender.start();
    }

    private UpstreamAnswer send(SpoolRequest request) throws Exception {
        Upstream to = board.upstreams().get(0);
        Exchange exchange = new DefaultExchange(camel);
        DeliveryExchange.setShipment(exchange, Shipment.single(new SpoolEntry(1, request)));
        DeliveryExchange.setDestination(exchange, to, request.target(), board.window(to).acquire().orElseThrow());
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        kafkaSender.process(exchange, done::complete);
        done.get(60, TimeUnit.SECONDS);
        return DeliveryExchange.answer(exchange);
    }

    private static SpoolRequest request(String target, String contentType, byte[] body, Optional<Credential> who) {
        return new SpoolRequest("POST", target, contentType, "", "key-" + UUID.randomUUID(), who,
                1_700_000_000_000L, body, List.of(new ForwardedHeader("X-Scope-OrgID", "tenant-a")), false);
    }

    private static Map<String, String> headersOf(ConsumerRecord<String, byte[]> record) {
        Map<String, String> headers = new HashMap<>();
        for (Header header : record.headers()) {
            headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
        }
        return headers;
    }

    @Test
    void theRecordIsTheStoredRequestAndTheAnswerSaysWhereItLies(TestKafka kafka) throws Exception {
        String topic = topic(kafka, Map.of());
        sendingTo(kafka, topic, Optional.empty());
        byte[] body = "{\"events\":[{\"n\":1}]}".getBytes(StandardCharsets.UTF_8);
        SpoolRequest request = request("/v1/ingest?tenant=a", "application/json", body,
                Optional.of(new Credential("Authorization", "Bearer s3cret-token")));
        UpstreamAnswer answer = send(request);

        assertNull(answer.failure());
        assertEquals(200, answer.status());
        assertEquals("application/json", answer.contentType());
        assertEquals("{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":0}",
                new String(answer.body(), StandardCharsets.UTF_8));
        ConsumerRecord<String, byte[]> record = kafka.read(topic, 1).get(0);
        assertArrayEquals(body, record.value(), "the body exactly");
        assertEquals(request.idempotencyKey(), record.key());
        Map<String, String> headers = headersOf(record);
        assertEquals("POST", headers.get(KafkaRecordHeaders.METHOD));
        assertEquals("/v1/ingest?tenant=a", headers.get(KafkaRecordHeaders.TARGET));
        assertEquals("tenant-a", headers.get("X-Scope-OrgID"), "a forwarded header travels with it");
        assertEquals(SenderDigest.of(SenderDigest.credentialOf("Authorization", "Bearer s3cret-token")),
                headers.get(KafkaRecordHeaders.SENDER), "the sender, as its digest");
        assertTrue(headers.values().stream().noneMatch(value -> value.contains("s3cret")),
                "never the credential: " + headers);
    }

    @Test
    void anOtlpExportIsAnsweredAsAnOtlpCollectorAnswersIt(TestKafka kafka) throws Exception {
        String topic = topic(kafka, Map.of());
        sendingTo(kafka, topic, Optional.empty());
        UpstreamAnswer answer = send(request("/v1/traces", "application/x-protobuf", new byte[] {10, 0},
                Optional.empty()));
        assertEquals(200, answer.status());
        assertEquals("application/x-protobuf", answer.contentType());
        assertEquals(0, answer.body().length, "an empty ExportTraceServiceResponse");
    }

    @Test
    void withTheRelaysOwnKeyEveryRecordNamesTheRelayAsItsSender(TestKafka kafka) throws Exception {
        String topic = topic(kafka, Map.of());
        sendingTo(kafka, topic, Optional.of(Secret.of("relay-key-1")));
        send(request("/v1/ingest", "application/json", "{}".getBytes(StandardCharsets.UTF_8),
                Optional.of(new Credential("Authorization", "Bearer someone-else"))));
        assertEquals(SenderDigest.of("relay-key-1"),
                headersOf(kafka.read(topic, 1).get(0)).get(KafkaRecordHeaders.SENDER));
    }

    @Test
    void aRecordTheTopicRefusesForGoodIsARefusalNamingTheTopic(TestKafka kafka) throws Exception {
        String topic = topic(kafka, Map.of("max.message.bytes", "1024"));
        sendingTo(kafka, topic, Optional.empty());
        UpstreamAnswer answer = send(request("/v1/ingest", "application/json", new byte[64 << 10], Optional.empty()));
        assertEquals(0, answer.status());
        KafkaFailures.Refused refused = assertInstanceOf(KafkaFailures.Refused.class, answer.failure(),
                String.valueOf(answer.failure()));
        assertTrue(refused.getMessage().startsWith("topic " + topic + ": "), refused.getMessage());
        assertEquals(0, kafka.recordCount(topic));
    }
}
