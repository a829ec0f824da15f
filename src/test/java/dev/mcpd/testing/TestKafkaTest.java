package dev.mcpd.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The tests' broker is a real one: what it acknowledged is there to read, and still there after it restarts. */
@ExtendWith(TestKafka.Shared.class)
class TestKafkaTest {

    @Test
    void whatTheSharedBrokerAcknowledgesAConsumerReadsByteForByte(TestKafka kafka) throws Exception {
        String topic = "round-trip-" + UUID.randomUUID();
        kafka.createTopic(topic, 2, Map.of());
        byte[] body = {0, 1, 2, (byte) 0xff, 'x'};
        send(kafka, topic, "key-1", body);
        List<ConsumerRecord<String, byte[]>> read = kafka.read(topic, 1);
        assertEquals("key-1", read.get(0).key());
        assertArrayEquals(body, read.get(0).value());
    }

    @Test
    void aRestartedBrokerStillHasWhatItAcknowledged(@TempDir Path dir) throws Exception {
        try (TestKafka kafka = TestKafka.start(dir)) {
            kafka.createTopic("kept", 1, Map.of());
            send(kafka, "kept", "before", "acknowledged".getBytes(StandardCharsets.UTF_8));
            kafka.restart();
            send(kafka, "kept", "after", "also".getBytes(StandardCharsets.UTF_8));
            List<ConsumerRecord<String, byte[]>> read = kafka.read("kept", 2);
            assertEquals(List.of("before", "after"), read.stream().map(ConsumerRecord::key).toList());
            assertEquals(2, kafka.recordCount("kept"));
        }
    }

    private static void send(TestKafka kafka, String topic, String key, byte[] value) throws Exception {
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap(), ProducerConfig.ACKS_CONFIG, "all"),
                new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        }
    }
}
