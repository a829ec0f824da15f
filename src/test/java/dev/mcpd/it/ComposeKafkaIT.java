package dev.mcpd.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * deploy/docker/docker-compose.kafka.yml brought up as written, by podman-compose: a KRaft broker, PostgreSQL, two
 * collectors consuming the topic as one group, two relays delivering to it. A request posted to each relay reaches
 * the shared store through the topic, every service's health check passes, and with collector-1 stopped — the file's
 * own demonstration — collector-2 takes its partitions and archives the next request. The broker and PostgreSQL are
 * stand-ins where their images cannot be pulled (standin-images.sh: Kafka's own jars from Maven Central, Debian's
 * PostgreSQL 15, each with its official image's start-up).
 */
// One podman project at a time: they share the image store and the stand-in images.
@ResourceLock("podman")
class ComposeKafkaIT {

    private static final ComposeProject COMPOSE = new ComposeProject("deploy/docker/docker-compose.kafka.yml",
            "mcpd-kafka", List.of(4317, 4318, 4319, 4320),
            List.of("kafka-data", "postgres-data", "relay-1-spool", "relay-2-spool"));

    @BeforeAll
    static void buildTheImage() throws Exception {
        List<String> images = new ArrayList<>(Podman.BASES);
        images.add(Podman.POSTGRES);
        images.add(Podman.KAFKA);
        COMPOSE.assumeUsable(images);
        Podman.build("localhost/mcpd:local");
    }

    @AfterAll
    static void takeItDown() throws Exception {
        COMPOSE.down();
    }

    private static long events(int port) throws Exception {
        String stats = COMPOSE.get(port, "/v1/stats").body();
        return Long.parseLong(stats.replaceAll(".*\"events\":(\\d+).*", "$1"));
    }

    @Test
    void bothRelaysRequestsReachTheSharedStoreThroughTheTopicAndCollectorTwoTakesOverItsPartitions()
            throws Exception {
        Podman.Result up = COMPOSE.compose(Duration.ofMinutes(3), "up", "-d", "--no-build");
        assertEquals(0, up.status(), "podman-compose up:\n" + up.output());
        for (int relay : List.of(4317, 4318)) {
            // Its routes serve: /readyz answers, not "starting" (/healthz says 200 a moment before).
            await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> !COMPOSE.get(relay, "/readyz")
                    .body().startsWith("starting"));
            HttpResponse<String> accepted = COMPOSE.ingest(relay, "via the relay on " + relay);
            assertEquals(202, accepted.statusCode(), accepted.body());
        }
        // The broker, the store and the group's first rebalance settle within a minute or two on a loaded machine.
        await().atMost(Duration.ofSeconds(240)).ignoreExceptions().until(() -> events(4319) == 2);
        // collector-2 may still be starting (six JVMs on two cores): it answers once it listens, from the same store.
        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> COMPOSE.get(4320, "/healthz")
                .statusCode() == 200);
        assertEquals(2, events(4320), "collector-2 reads the same PostgreSQL store");
        COMPOSE.awaitHealthy(Duration.ofSeconds(90),
                List.of("kafka", "postgres", "collector-1", "collector-2", "relay-1", "relay-2"));
        // A collector says "degraded" until its first check of the broker, which runs apart from its start.
        for (int collector : List.of(4319, 4320)) {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() ->
                    "ok".equals(COMPOSE.get(collector, "/readyz").body().strip()));
        }

        Podman.Result stop = COMPOSE.compose(Duration.ofMinutes(1), "stop", "collector-1");
        assertEquals(0, stop.status(), stop.output());
        HttpResponse<String> after = COMPOSE.ingest(4317, "after collector-1 stopped");
        assertEquals(202, after.statusCode(), after.body());
        // collector-2 takes collector-1's partitions once the group rebalances (collector-1 left it on SIGTERM).
        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> events(4320) == 3);
        String metrics = COMPOSE.get(4320, "/metrics").body();
        assertTrue(metrics.contains("mcpd_collector_source_records_total{outcome=\"archived\"}"), metrics);
    }
}
