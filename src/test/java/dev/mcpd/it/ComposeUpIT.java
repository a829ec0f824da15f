package dev.mcpd.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * deploy/docker/docker-compose.multi-region.yml brought up as written, by podman-compose on podman's own networks:
 * PostgreSQL, two collectors on it, the relay in front. A request posted to the relay reaches the shared store (both
 * collectors count it), every service's health check passes, and with collector-1 stopped — the file's own
 * demonstration — the next request is delivered by collector-2. PostgreSQL is a stand-in where postgres:16 cannot be
 * pulled (Debian's PostgreSQL 15 with the official image's POSTGRES_* start-up, made by standin-images.sh).
 *
 * <p>podman without systemd runs no health check on its own schedule, so the test runs each one ({@code podman
 * healthcheck run}); and podman-compose waits for no {@code condition: service_healthy}: the collectors start beside
 * PostgreSQL and take the store once it answers.
 */
// One podman project at a time: they share the image store and the stand-in images.
@ResourceLock("podman")
class ComposeUpIT {

    private static final ComposeProject COMPOSE = new ComposeProject("deploy/docker/docker-compose.multi-region.yml",
            "mcpd-compose", List.of(4317, 4318, 4319), List.of("relay-spool", "postgres-data"));

    @BeforeAll
    static void buildTheImage() throws Exception {
        List<String> images = new ArrayList<>(Podman.BASES);
        images.add(Podman.POSTGRES);
        COMPOSE.assumeUsable(images);
        Podman.build("localhost/mcpd:local");
    }

    @AfterAll
    static void takeItDown() throws Exception {
        COMPOSE.down();
    }

    /** What the relay's /relay/status says each upstream delivered. */
    private Map<String, Long> deliveredBy() throws Exception {
        Map<String, Long> delivered = new HashMap<>();
        for (JsonNode upstream : new ObjectMapper()
                .readTree(COMPOSE.get(4317, "/relay/status").body()).get("upstreams")) {
            delivered.put(upstream.get("url").asText(), upstream.get("delivered").asLong());
        }
        return delivered;
    }

    @Test
    void theTopologyComesUpCarriesARequestToTheSharedStoreAndFailsOverToCollectorTwo() throws Exception {
        Podman.Result up = COMPOSE.compose(Duration.ofMinutes(3), "up", "-d", "--no-build");
        assertEquals(0, up.status(), "podman-compose up:\n" + up.output());

        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> COMPOSE.get(4317, "/readyz").statusCode()
                == 200);
        HttpResponse<String> accepted = COMPOSE.ingest(4317, "hello");
        assertEquals(202, accepted.statusCode(), accepted.body());
        // A collector that started before PostgreSQL answered is restarted, and the relay's retries back off: minutes
        // at worst on a loaded machine, seconds here.
        await().atMost(Duration.ofSeconds(180)).ignoreExceptions().until(() ->
                COMPOSE.get(4318, "/v1/stats").body().contains("\"events\":1,"));
        // collector-2 reads the same PostgreSQL store; it may still be starting, or restarting.
        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() ->
                COMPOSE.get(4319, "/v1/stats").body().contains("\"events\":1,"));
        COMPOSE.awaitHealthy(Duration.ofSeconds(60), List.of("postgres", "collector-1", "collector-2", "relay"));

        Podman.Result stop = COMPOSE.compose(Duration.ofMinutes(1), "stop", "collector-1");
        assertEquals(0, stop.status(), stop.output());
        HttpResponse<String> second = COMPOSE.ingest(4317, "after collector-1 stopped");
        assertEquals(202, second.statusCode(), second.body());
        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() ->
                COMPOSE.get(4319, "/v1/stats").body().contains("\"events\":2,"));
        // The store has it once collector-2 archived it; the relay counts it once collector-2's answer is back.
        Map<String, Long> expected = Map.of("http://collector-1:4317", 1L, "http://collector-2:4317", 1L);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertEquals(expected,
                deliveredBy(), "the first by collector-1, the second by collector-2"));
    }
}
