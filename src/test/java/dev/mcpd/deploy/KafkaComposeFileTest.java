package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * deploy/docker/docker-compose.kafka.yml, read without Docker: a KRaft broker, two relays delivering to its topic, two
 * collectors consuming it as one group into one PostgreSQL — and every mcpd service's settings accepted by the real
 * command line. (ComposeKafkaIT brings it up.)
 */
class KafkaComposeFileTest {

    static final String COMPOSE = "deploy/docker/docker-compose.kafka.yml";
    private static final String TOPIC = "kafka://kafka:9092/telemetry";

    private static Map<String, Object> service(String name) {
        return DeployFiles.map(DeployFiles.map(DeployFiles.yamlMap(COMPOSE).get("services"), "services").get(name),
                "service " + name);
    }

    private static Map<String, String> settings(String name) {
        Map<String, String> environment = new HashMap<>(DeployFiles.dockerfileEnvironment(
                DeployFiles.dockerfile(DockerfileTest.DOCKERFILE)));
        environment.putAll(DockerComposeFileTest.environment(service(name)));
        return environment;
    }

    @Test
    void theRelaysDeliverToTheTopicThatBothCollectorsConsumeAsOneGroupIntoOneStore() {
        for (String relay : List.of("relay-1", "relay-2")) {
            DeployFiles.CliRun run = DeployFiles.mcpd(settings(relay), "config");
            assertEquals(0, run.status(), relay + ": " + run.err());
            assertEquals("relay           1 upstream(s) in order, " + TOPIC, run.section("relay").substring(0,
                    run.section("relay").indexOf(';')), relay);
        }
        for (String collector : List.of("collector-1", "collector-2")) {
            DeployFiles.CliRun run = DeployFiles.mcpd(settings(collector), "config");
            assertEquals(0, run.status(), collector + ": " + run.err());
            assertTrue(run.section("source").startsWith("source          consumes " + TOPIC + " as group mcpd-serve"),
                    collector + ": " + run.section("source"));
            assertTrue(run.section("store").endsWith("(PostgreSQL)"), collector);
        }
        assertEquals(settings("collector-1").get("MCPD_DATA"), settings("collector-2").get("MCPD_DATA"));
    }

    @Test
    void theBrokerAdvertisesTheNameTheRelaysAndCollectorsUseAndKeepsItsLogOnAVolume() {
        Map<String, String> broker = DockerComposeFileTest.environment(service("kafka"));
        assertEquals("PLAINTEXT://kafka:9092", broker.get("KAFKA_ADVERTISED_LISTENERS"));
        assertEquals("4", broker.get("KAFKA_NUM_PARTITIONS"), "partitions for both collectors to share");
        assertTrue(DeployFiles.list(service("kafka").get("volumes"), "kafka volumes").stream().map(String::valueOf)
                .anyMatch(v -> v.endsWith(":" + broker.get("KAFKA_LOG_DIRS"))), "the log survives the container");
    }
}
