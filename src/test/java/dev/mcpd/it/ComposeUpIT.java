package dev.mcpd.it;

import static dev.mcpd.it.Podman.podman;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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
class ComposeUpIT {

    private static final String FILE = "deploy/docker/docker-compose.multi-region.yml";
    private static final String PROJECT = "mcpd-compose-" + ProcessHandle.current().pid();
    private static final List<Integer> PORTS = List.of(4317, 4318, 4319);
    private static Path containersConf;

    @BeforeAll
    static void buildTheImage() throws Exception {
        Podman.Result compose;
        try {
            compose = Podman.run(Duration.ofSeconds(30), List.of("podman-compose", "--version"), Map.of());
        } catch (IOException e) {
            compose = new Podman.Result(-1, e.getMessage());
        }
        assumeTrue(compose.status() == 0, "podman-compose cannot run here (.ci/run installs it): "
                + compose.output().strip());
        List<String> images = new ArrayList<>(Podman.BASES);
        images.add(Podman.POSTGRES);
        Podman.assumeUsable(images);
        assumeNetworksWork();
        for (int port : PORTS) {
            assumeTrue(free(port), "port " + port + " is in use: the Compose file publishes 4317–4319");
        }
        // What ContainerIT gives on podman's command line, for every podman call podman-compose makes.
        containersConf = Files.createTempFile("mcpd-compose", ".conf");
        Files.writeString(containersConf, """
                [containers]
                default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

                [engine]
                runtime = "runc"
                """);
        Podman.build("localhost/mcpd:local");
    }

    /**
     * What the Compose file needs of podman's networks: containers on a network of their own that reach each other by
     * name, and a published port the host reaches. A sandbox may lack what they take (the test then says so).
     */
    private static void assumeNetworksWork() throws Exception {
        String network = PROJECT + "_probe";
        String server = PROJECT + "_probe_server";
        int published = PackagedJar.freePort();
        Path dir = Files.createTempDirectory("mcpd-network-probe");
        Files.writeString(dir.resolve("Probe.java"), """
                public class Probe {
                    public static void main(String[] args) throws Exception {
                        var server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress(8080), 0);
                        server.createContext("/", exchange -> {
                            exchange.sendResponseHeaders(200, 2);
                            exchange.getResponseBody().write("ok".getBytes());
                            exchange.close();
                        });
                        server.start();
                    }
                }
                """);
        try {
            Podman.Result step = podman(Duration.ofSeconds(30), "network", "create", network);
            if (step.status() == 0) {
                List<String> args = new ArrayList<>(List.of("run", "-d", "--name", server, "--network", network,
                        "--network-alias", "probe", "-p", published + ":8080", "-v", dir + ":/probe:ro"));
                args.addAll(Podman.LIMITS);
                args.addAll(List.of(Podman.BASES.get(0), "java", "/probe/Probe.java"));
                step = podman(Duration.ofSeconds(60), args.toArray(String[]::new));
            }
            if (step.status() == 0) {
                List<String> args = new ArrayList<>(List.of("run", "--rm", "--network", network));
                args.addAll(Podman.LIMITS);
                args.addAll(List.of(Podman.BASES.get(1), "sh", "-c", "for i in $(seq 1 120); do"
                        + " curl -sf http://probe:8080/ && exit 0; sleep 0.5; done; exit 1"));
                step = podman(Duration.ofSeconds(90), args.toArray(String[]::new));
            }
            assumeTrue(step.status() == 0, "podman cannot run containers that reach each other by name on a network"
                    + " of their own here (the Compose file needs it): " + step.output().strip());
            boolean reached;
            try {
                reached = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + published + "/")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString()).body().equals("ok");
            } catch (IOException e) {
                reached = false;
            }
            assumeTrue(reached, "podman cannot publish a container's port to this host (the Compose file publishes"
                    + " 4317–4319)");
        } finally {
            podman(Duration.ofSeconds(30), "rm", "-f", server);
            podman(Duration.ofSeconds(30), "network", "rm", "-f", network);
            Files.deleteIfExists(dir.resolve("Probe.java"));
            Files.deleteIfExists(dir);
        }
    }

    @AfterAll
    static void takeItDown() throws Exception {
        if (containersConf == null) {
            return;
        }
        compose(Duration.ofMinutes(2), "down", "-v");
        Podman.Result left = podman(Duration.ofSeconds(30), "ps", "-aq", "--filter",
                "label=io.podman.compose.project=" + PROJECT);
        for (String id : left.output().strip().split("\\s+")) {
            if (!id.isBlank()) {
                podman(Duration.ofSeconds(30), "rm", "-f", id);
            }
        }
        podman(Duration.ofSeconds(30), "volume", "rm", "-f", PROJECT + "_relay-spool", PROJECT + "_postgres-data");
        podman(Duration.ofSeconds(30), "network", "rm", "-f", PROJECT + "_default");
        Files.deleteIfExists(containersConf);
    }

    private static Podman.Result compose(Duration deadline, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("podman-compose", "-p", PROJECT, "-f", FILE));
        command.addAll(List.of(args));
        return Podman.run(deadline, command, Map.of("CONTAINERS_CONF", containersConf.toString()));
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> ingest(String message) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:4317/v1/ingest"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"msg\":\"" + message + "\"}]}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** What the relay's /relay/status says each upstream delivered. */
    private Map<String, Long> deliveredBy() throws Exception {
        Map<String, Long> delivered = new java.util.HashMap<>();
        for (com.fasterxml.jackson.databind.JsonNode upstream : new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(get(4317, "/relay/status").body()).get("upstreams")) {
            delivered.put(upstream.get("url").asText(), upstream.get("delivered").asLong());
        }
        return delivered;
    }

    private static String container(String service) {
        return PROJECT + "_" + service + "_1";
    }

    @Test
    void theTopologyComesUpCarriesARequestToTheSharedStoreAndFailsOverToCollectorTwo() throws Exception {
        Podman.Result up = compose(Duration.ofMinutes(3), "up", "-d", "--no-build");
        assertEquals(0, up.status(), "podman-compose up:\n" + up.output());

        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> get(4317, "/readyz").statusCode()
                == 200);
        HttpResponse<String> accepted = ingest("hello");
        assertEquals(202, accepted.statusCode(), accepted.body());
        // A collector that started before PostgreSQL answered is restarted, and the relay's retries back off: minutes
        // at worst on a loaded machine, seconds here.
        await().atMost(Duration.ofSeconds(180)).ignoreExceptions().until(() ->
                get(4318, "/v1/stats").body().contains("\"events\":1,"));
        assertTrue(get(4319, "/v1/stats").body().contains("\"events\":1,"),
                "collector-2 reads the same PostgreSQL store");
        for (String service : List.of("postgres", "collector-1", "collector-2", "relay")) {
            Podman.Result health = podman(Duration.ofSeconds(30), "healthcheck", "run", container(service));
            assertEquals(0, health.status(), service + "'s health check: " + health.output());
        }

        Podman.Result stop = compose(Duration.ofMinutes(1), "stop", "collector-1");
        assertEquals(0, stop.status(), stop.output());
        HttpResponse<String> second = ingest("after collector-1 stopped");
        assertEquals(202, second.statusCode(), second.body());
        await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() ->
                get(4319, "/v1/stats").body().contains("\"events\":2,"));
        // The store has it once collector-2 archived it; the relay counts it once collector-2's answer is back.
        Map<String, Long> expected = Map.of("http://collector-1:4317", 1L, "http://collector-2:4317", 1L);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> assertEquals(expected,
                deliveredBy(), "the first by collector-1, the second by collector-2"));
    }
}
