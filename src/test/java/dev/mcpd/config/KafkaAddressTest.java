package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KafkaAddressTest {

    @Test
    void severalBrokersAndATopic() {
        KafkaAddress address = KafkaAddress.parse(URI.create("kafka://k1.example:9092,10.0.0.7:9093,k3:9094/otel.spans-v1"));
        assertEquals(List.of("k1.example:9092", "10.0.0.7:9093", "k3:9094"), address.brokers());
        assertEquals("k1.example:9092,10.0.0.7:9093,k3:9094", address.bootstrap());
        assertEquals("otel.spans-v1", address.topic());
        assertFalse(address.tls());
        assertEquals("kafka://k1.example:9092,10.0.0.7:9093,k3:9094/otel.spans-v1", address.toString());
        assertEquals(List.of("[::1]:9094"), KafkaAddress.parse(URI.create("kafka://[::1]:9094/t")).brokers());
    }

    @Test
    void kafkasSpeaksTls() {
        KafkaAddress address = KafkaAddress.parse(URI.create("KAFKAS://broker:9093/telemetry"));
        assertTrue(address.tls());
        assertTrue(KafkaAddress.isKafka(URI.create("kafkas://broker:9093/telemetry")));
        assertFalse(KafkaAddress.isKafka(URI.create("https://collector:4318")));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "kafka://broker:9092         | names its topic",
        "kafka://broker:9092/        | names its topic",
        "kafka://broker/topic        | is not a broker's HOST:PORT",
        "kafka://broker:0/topic      | has no port from 1 to 65535",
        "kafka://broker:70000/topic  | has no port from 1 to 65535",
        "kafka://broker:x/topic      | has no port from 1 to 65535",
        "kafka://a:1,,b:2/topic      | is not a broker's HOST:PORT",
        "kafka://user:pw@broker:9092/topic | carries no credentials",
        "kafka://broker:9092/a/b     | is not a Kafka topic name",
        "kafka://broker:9092/..      | is not a Kafka topic name",
        "kafka://broker:9092/t?acks=1 | write a Kafka address as",
        "kafka:broker:9092/t         | write a Kafka address as",
    })
    void aWrongAddressSaysWhatIsWrongInOneLine(String address, String reason) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> KafkaAddress.parse(URI.create(address)));
        assertTrue(refused.getMessage().contains(reason), refused.getMessage());
        assertFalse(refused.getMessage().contains("\n"));
    }
}
