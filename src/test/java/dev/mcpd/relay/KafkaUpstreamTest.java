package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.TestCertificates;
import dev.mcpd.testing.TestKafka;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.wire.SenderDigest;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A Kafka topic as an upstream, on a real broker: one record per entry — the body exactly, keyed by the idempotency
 * key, the request in its headers, never a credential — delivered only on the broker's acknowledgement; refusals for
 * good go to dead/ with the broker's reason; while the broker is down entries go to the next upstream, and back once
 * it returns.
 */
@ExtendWith(TestKafka.Shared.class)
class KafkaUpstreamTest {

    /** Short backoff; 5 s for the broker to acknowledge a record (Kafka's own timeouts fit within it). */
    static final RelayApplication.Tuning KAFKA = new RelayApplication.Tuning(
            new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), Math::random), Duration.ofSeconds(1),
            Duration.ofSeconds(30), Map.of("mcpd.delivery.timeout-ms", "5000"));

    @TempDir
    Path dir;

    private static String topic(TestKafka kafka, int partitions, Map<String, String> settings) {
        String topic = "relay-" + UUID.randomUUID();
        kafka.createTopic(topic, partitions, settings);
        return topic;
    }

    private RunningRelay relay(String... upstreams) {
        return RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", String.join(",", upstreams)), KAFKA);
    }

    private static HttpResponse<String> post(RunningRelay relay, String path, byte[] body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri(path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void awaitSpoolEmpty(RunningRelay relay) {
        await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
    }

    private static Map<String, String> headers(ConsumerRecord<String, byte[]> record) {
        Map<String, String> headers = new HashMap<>();
        for (Header header : record.headers()) {
            headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
        }
        return headers;
    }

    private static byte[] gzip(byte[] bytes) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream zip = new GZIPOutputStream(out)) {
            zip.write(bytes);
        }
        return out.toByteArray();
    }

    @Test
    void eachEntryIsOneRecordItsBodyExactlyKeyedByItsKeyDescribedByItsHeadersWithoutACredential(TestKafka kafka)
            throws Exception {
        String topic = topic(kafka, 3, Map.of());
        byte[] json = ("{\"events\":[{\"id\":\"" + UUID.randomUUID() + "\"}]}").getBytes(StandardCharsets.UTF_8);
        byte[] compressed = gzip(new byte[]{0, 1, 2, (byte) 0xfe, (byte) 0xff, '\n', 0});
        long before = System.currentTimeMillis();
        try (RunningRelay relay = relay("kafka://" + kafka.bootstrap() + "/" + topic)) {
            assertEquals(202, post(relay, "/v1/ingest", json, "Content-Type", "application/json",
                    "Idempotency-Key", "order-17", "Authorization", "Bearer sender-secret-1").statusCode());
            assertEquals(200, post(relay, "/v1/logs?tenant=a", compressed, "Content-Type", "application/x-protobuf",
                    "Content-Encoding", "gzip", "x-mcpd-key", "sender-secret-2", "X-Scope-OrgID", "tenant-a")
                    .statusCode());
            awaitSpoolEmpty(relay);
            assertEquals(0, relay.application().deadLetters().count());
            assertEquals("kafka", relay.application().upstreams().views().get(0).traffic().protocol());
        }
        long after = System.currentTimeMillis();
        List<ConsumerRecord<String, byte[]>> records = kafka.read(topic, 2);
        ConsumerRecord<String, byte[]> first = records.stream().filter(r -> r.key().equals("order-17")).findFirst()
                .orElseThrow();
        ConsumerRecord<String, byte[]> second = records.stream().filter(r -> r != first).findFirst().orElseThrow();

        assertArrayEquals(json, first.value());
        Map<String, String> firstHeaders = headers(first);
        assertEquals("POST", firstHeaders.remove("mcpd-method"));
        assertEquals("/v1/ingest", firstHeaders.remove("mcpd-target"));
        assertEquals("application/json", firstHeaders.remove("content-type"));
        assertEquals("order-17", firstHeaders.remove("idempotency-key"));
        long receivedAt = Long.parseLong(firstHeaders.remove("mcpd-received-at"));
        assertTrue(receivedAt >= before && receivedAt <= after, "received at " + receivedAt);
        assertEquals(SenderDigest.of("sender-secret-1"), firstHeaders.remove("mcpd-sender"),
                "whose keys these are: the digest of the Bearer token, as a collector names the sender over HTTP");
        assertEquals(Map.of(), firstHeaders, "no other header: no content-encoding when none was sent");

        assertArrayEquals(compressed, second.value(), "still compressed, byte for byte");
        assertTrue(second.key().startsWith("relay-"), "the relay's own key: " + second.key());
        Map<String, String> secondHeaders = headers(second);
        assertEquals(second.key(), secondHeaders.get("idempotency-key"));
        assertEquals("/v1/logs?tenant=a", secondHeaders.get("mcpd-target"));
        assertEquals("application/x-protobuf", secondHeaders.get("content-type"));
        assertEquals("gzip", secondHeaders.get("content-encoding"));
        assertEquals("tenant-a", secondHeaders.get("X-Scope-OrgID"), "a forwarded header, under its own name");
        assertEquals(SenderDigest.of("sender-secret-2"), secondHeaders.get("mcpd-sender"));
        assertEquals(8, secondHeaders.size());

        for (ConsumerRecord<String, byte[]> record : records) {
            String everything = record.key() + new String(record.value(), StandardCharsets.ISO_8859_1)
                    + record.headers().toString() + headers(record);
            assertFalse(everything.contains("sender-secret"), "a credential reached the topic: " + everything);
        }
    }

    @Test
    void aSenderThatWaitsGetsTheRecordsPartitionAndOffset(TestKafka kafka) throws Exception {
        String topic = topic(kafka, 2, Map.of());
        try (CapturedLog log = new CapturedLog();
             RunningRelay relay = relay("kafka://" + kafka.bootstrap() + "/" + topic)) {
            byte[] body = "{\"events\":[]}".getBytes(StandardCharsets.UTF_8);
            HttpResponse<String> answer = post(relay, "/v1/ingest", body, "Content-Type", "application/json",
                    "mcpd-relay-wait", "10s");
            assertEquals(200, answer.statusCode(), answer.body());
            assertEquals("delivered", answer.headers().firstValue("mcpd-relay").orElseThrow());
            JsonNode placed = new ObjectMapper().readTree(answer.body());
            assertEquals(topic, placed.get("topic").asText());
            JsonNode documented = new ObjectMapper().readTree(DocExample.block(Path.of("docs/kafka.md"),
                    "kafka-wait-answer"));
            assertEquals(fieldsOf(documented), fieldsOf(placed), "docs/kafka.md shows the answer's fields");
            ConsumerRecord<String, byte[]> record = kafka.read(topic, 1).get(0);
            assertEquals(record.partition(), placed.get("partition").asInt());
            assertEquals(record.offset(), placed.get("offset").asLong());

            HttpResponse<String> otlp = post(relay, "/v1/logs", "{\"resourceLogs\":[]}".getBytes(
                    StandardCharsets.UTF_8), "Content-Type", "application/json", "mcpd-relay-wait", "10s");
            assertEquals(200, otlp.statusCode());
            assertEquals("{\"partialSuccess\":{}}", otlp.body(), "an OTLP sender gets the answer OTLP gives");
            assertTrue(log.events("org.apache.kafka.clients.producer.ProducerConfig", Level.INFO).isEmpty(),
                    "no dump of the client's settings: the relay says the ones that matter in one line");
            assertEquals(1, log.events("dev.mcpd.delivery.KafkaUpstreams", Level.INFO).stream()
                    .filter(e -> e.getFormattedMessage().contains(" kafka producer: topic=" + topic + " ")).count());
        }
    }

    @Test
    void aRecordLargerThanTheTopicTakesGoesToDeadWithTheBrokersReason(TestKafka kafka) throws Exception {
        String topic = topic(kafka, 1, Map.of("max.message.bytes", "4096"));
        try (RunningRelay relay = relay("kafka://" + kafka.bootstrap() + "/" + topic)) {
            byte[] large = ("{\"pad\":\"" + "x".repeat(20_000) + "\"}").getBytes(StandardCharsets.UTF_8);
            post(relay, "/v1/ingest", large, "Content-Type", "application/json");
            await().atMost(PATIENCE).until(() -> relay.application().deadLetters().count() == 1);
            awaitSpoolEmpty(relay);
            JsonNode why = sidecar(relay);
            assertTrue(why.get("reason").asText().contains("RecordTooLargeException"), why.toString());
            assertEquals("kafka://" + kafka.bootstrap() + "/" + topic, why.get("upstream").asText());
            assertArrayEquals(large, relay.application().deadLetters().entries().get(0).request().body());
            assertTrue(relay.application().upstreams().views().get(0).waiting().isEmpty(), "the topic is not to blame");

            post(relay, "/v1/ingest", "{}".getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json");
            awaitSpoolEmpty(relay);
            assertEquals(1, kafka.recordCount(topic), "the small one delivered, the large one never written");
        }
    }

    @Test
    void anUnknownTopicGoesToDeadWithTheBrokersReason(TestKafka kafka) throws Exception {
        String missing = "never-created-" + UUID.randomUUID();
        try (RunningRelay relay = relay("kafka://" + kafka.bootstrap() + "/" + missing)) {
            post(relay, "/v1/ingest", "{}".getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json");
            await().atMost(PATIENCE).until(() -> relay.application().deadLetters().count() == 1);
            JsonNode why = sidecar(relay);
            assertTrue(why.get("reason").asText().startsWith("refused by the broker: topic " + missing
                    + ": UnknownTopicOrPartitionException: "), why.toString());
        }
        try (var admin = kafka.admin()) {
            assertFalse(admin.listTopics().names().get().contains(missing), "nothing created the topic");
        }
    }

    @Test
    void theProducerRunsWithTheSettingsDocsKafkaMdShows(TestKafka kafka) throws Exception {
        String topic = topic(kafka, 1, Map.of());
        Logger clientSettings = (Logger) LoggerFactory
                .getLogger("org.apache.kafka.clients.producer.ProducerConfig");
        clientSettings.setLevel(Level.INFO); // the client's own dump shows what it really runs with
        try (CapturedLog log = new CapturedLog();
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", "kafka://" + kafka.bootstrap()
                     + "/" + topic), RelayApplication.Tuning.standard())) {
            post(relay, "/v1/ingest", "{}".getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json");
            awaitSpoolEmpty(relay);
            String settings = producerConfig(log);
            Matcher row = Pattern.compile("(?m)^\\| `([a-z.]+)` \\| `?([0-9 a-z]+)`? \\|").matcher(
                    DocExample.table(Path.of("docs/kafka.md"), "| setting | value | why |"));
            int rows = 0;
            while (row.find()) {
                String value = row.group(2).replace(" ", "").replace("all", "-1");
                assertTrue(settings.contains(row.group(1) + " = " + value), row.group(1) + " = " + value + " in "
                        + settings);
                rows++;
            }
            assertEquals(7, rows, "every setting with a value of its own in the table is checked");
            String said = log.events("dev.mcpd.delivery.KafkaUpstreams", Level.INFO).stream()
                    .map(e -> e.getFormattedMessage()).filter(m -> m.contains(" kafka producer: ")).findFirst()
                    .orElseThrow();
            Matcher pair = Pattern.compile("([a-z.]+)=([0-9a-zA-Z]+)").matcher(said);
            int told = 0;
            while (pair.find()) {
                if (pair.group(1).contains(".") || pair.group(1).equals("acks")) {
                    String value = pair.group(2).equals("all") ? "-1" : pair.group(2);
                    assertTrue(settings.contains(pair.group(1) + " = " + value), "the relay's line says "
                            + pair.group(0) + ", the client runs with it: " + settings);
                    told++;
                }
            }
            assertEquals(9, told, said);
            for (String setting : List.of("value.serializer = class " + ByteArraySerializer.class.getName(),
                    "key.serializer = class " + StringSerializer.class.getName(),
                    "bootstrap.servers = [" + kafka.bootstrap() + "]")) {
                assertTrue(settings.contains(setting), setting + " in " + settings);
            }
        } finally {
            clientSettings.setLevel(null);
        }
    }

    private static String producerConfig(CapturedLog log) {
        return log.events("org.apache.kafka.clients.producer.ProducerConfig", Level.INFO).stream()
                .map(e -> e.getFormattedMessage()).filter(m -> m.contains("mcpd-relay-upstream-1"))
                .findFirst().orElseThrow();
    }

    private static Set<String> fieldsOf(JsonNode object) {
        Set<String> fields = new TreeSet<>();
        object.fieldNames().forEachRemaining(fields::add);
        return fields;
    }

    @Test
    void whileTheBrokerIsDownEntriesGoToTheNextUpstreamAndComeBackOnceItReturns(@TempDir Path brokerDir)
            throws Exception {
        try (TestKafka kafka = TestKafka.start(brokerDir);
             TestUpstream secondary = TestUpstream.start()) {
            String topic = topic(kafka, 1, Map.of());
            try (RunningRelay relay = relay("kafka://" + kafka.bootstrap() + "/" + topic,
                    secondary.url().toString())) {
                post(relay, "/v1/ingest", "{\"n\":1}".getBytes(StandardCharsets.UTF_8));
                awaitSpoolEmpty(relay);
                assertEquals(1, kafka.recordCount(topic));

                kafka.stop();
                List<String> whileDown = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    String body = "{\"down\":" + i + "}";
                    whileDown.add(body);
                    post(relay, "/v1/ingest", body.getBytes(StandardCharsets.UTF_8));
                }
                await().atMost(PATIENCE).until(() -> secondary.received().size() == 3);
                assertEquals(whileDown.stream().sorted().toList(), secondary.received().stream()
                        .map(r -> new String(r.body(), StandardCharsets.UTF_8)).sorted().toList());

                kafka.restart();
                await().atMost(PATIENCE).until(() -> relay.application().upstreams().views().get(0).state()
                        .equals("up"));
                post(relay, "/v1/ingest", "{\"n\":2}".getBytes(StandardCharsets.UTF_8));
                awaitSpoolEmpty(relay);
                assertEquals(2, kafka.recordCount(topic), "back on the topic once the broker returned");
                assertEquals(3, secondary.received().size());
                assertEquals(0, relay.application().deadLetters().count());
            }
        }
    }

    @Test
    void kafkasTrustsTheUpstreamAuthorityAndPresentsTheRelaysClientCertificate(@TempDir Path brokerDir,
                                                                              @TempDir Path certs) throws Exception {
        assumeTrue(TestCertificates.available(), "openssl makes the certificates (.ci/run installs it)");
        TestCertificates brokers = TestCertificates.authority(certs, "brokers");
        TestCertificates relays = TestCertificates.authority(certs, "relays");
        TestCertificates.Pair client = relays.client("relay", "relay-1");
        byte[] body = "{\"events\":[{\"over\":\"tls\"}]}".getBytes(StandardCharsets.UTF_8);
        try (TestKafka kafka = TestKafka.startWithTls(brokerDir, brokers.server("broker", "broker-1"),
                relays.caCert)) {
            String topic = topic(kafka, 1, Map.of());
            try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", "kafkas://"
                    + kafka.tlsBootstrap() + "/" + topic, "MCPD_UPSTREAM_CA", brokers.caCert.toString(),
                    "MCPD_UPSTREAM_CLIENT_CERT", client.cert().toString(), "MCPD_UPSTREAM_CLIENT_KEY",
                    client.key().toString()), KAFKA)) {
                post(relay, "/v1/ingest", body, "Content-Type", "application/json");
                awaitSpoolEmpty(relay);
                assertEquals(0, relay.application().deadLetters().count());
            }
            assertArrayEquals(body, kafka.read(topic, 1).get(0).value(), "delivered over TLS, read in plain text");
        }
    }

    private static JsonNode sidecar(RunningRelay relay) throws Exception {
        try (var files = Files.list(relay.spoolDir().resolve("dead"))) {
            Path sidecar = files.filter(f -> f.toString().endsWith(".json")).findFirst().orElseThrow();
            return new ObjectMapper().readTree(sidecar.toFile());
        }
    }
}
