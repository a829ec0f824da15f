package dev.mcpd.it;

import static dev.mcpd.it.Podman.podman;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
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

/**
 * A Compose file of deploy/docker brought up by podman-compose on podman's own networks, under a project name of its
 * own: what the Compose ITs share. {@link #assumeUsable} skips the test, saying why, where podman-compose, the images
 * or podman's networks are missing or a published port is taken; {@link #down} removes every container, volume and
 * network the project made.
 *
 * <p>podman without systemd runs no health check on its own schedule, so the tests run each one ({@code podman
 * healthcheck run}); and podman-compose waits for no {@code condition: service_healthy}: services start beside
 * their dependencies and retry until those answer.
 */
final class ComposeProject {

    private final String file;
    private final String project;
    private final List<Integer> ports;
    private final List<String> volumes;
    private Path containersConf;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    /**
     * @param volumes the file's named volumes, removed by {@link #down}
     */
    ComposeProject(String file, String name, List<Integer> ports, List<String> volumes) {
        this.file = file;
        this.project = name + "-" + ProcessHandle.current().pid();
        this.ports = ports;
        this.volumes = volumes;
    }

    /** Skips the test unless podman-compose runs, the images are there, networks work and the ports are free. */
    void assumeUsable(List<String> images) throws Exception {
        Podman.Result compose;
        try {
            compose = Podman.run(Duration.ofSeconds(30), List.of("podman-compose", "--version"), Map.of());
        } catch (IOException e) {
            compose = new Podman.Result(-1, e.getMessage());
        }
        assumeTrue(compose.status() == 0, "podman-compose cannot run here (.ci/run installs it): "
                + compose.output().strip());
        Podman.assumeUsable(images);
        assumeNetworksWork();
        for (int port : ports) {
            assumeTrue(free(port), "port " + port + " is in use: the Compose file publishes " + ports);
        }
        // What ContainerIT gives on podman's command line, for every podman call podman-compose makes.
        containersConf = Files.createTempFile("mcpd-compose", ".conf");
        Files.writeString(containersConf, """
                [containers]
                default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

                [engine]
                runtime = "runc"
                """);
    }

    /**
     * What the Compose file needs of podman's networks: containers on a network of their own that reach each other by
     * name, and a published port the host reaches. A sandbox may lack what they take (the test then says so).
     */
    private void assumeNetworksWork() throws Exception {
        String network = project + "_probe";
        String server = project + "_probe_server";
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
                    + " " + ports + ")");
        } finally {
            podman(Duration.ofSeconds(30), "rm", "-f", server);
            podman(Duration.ofSeconds(30), "network", "rm", "-f", network);
            Files.deleteIfExists(dir.resolve("Probe.java"));
            Files.deleteIfExists(dir);
        }
    }

    /** Takes the project down, and whatever podman-compose left of it. */
    void down() throws Exception {
        if (containersConf == null) {
            return;
        }
        compose(Duration.ofMinutes(2), "down", "-v");
        Podman.Result left = podman(Duration.ofSeconds(30), "ps", "-aq", "--filter",
                "label=io.podman.compose.project=" + project);
        for (String id : left.output().strip().split("\\s+")) {
            if (!id.isBlank()) {
                podman(Duration.ofSeconds(30), "rm", "-f", id);
            }
        }
        for (String volume : volumes) {
            podman(Duration.ofSeconds(30), "volume", "rm", "-f", project + "_" + volume);
        }
        podman(Duration.ofSeconds(30), "network", "rm", "-f", project + "_default");
        Files.deleteIfExists(containersConf);
    }

    /** {@code podman-compose -p PROJECT -f FILE ARGS…}. */
    Podman.Result compose(Duration deadline, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("podman-compose", "-p", project, "-f", file));
        command.addAll(List.of(args));
        return Podman.run(deadline, command, Map.of("CONTAINERS_CONF", containersConf.toString()));
    }

    /** Runs a service's health check now; its result. */
    Podman.Result healthcheck(String service) throws Exception {
        return podman(Duration.ofSeconds(30), "healthcheck", "run", project + "_" + service + "_1");
    }

    /**
     * Runs each service's health check until it passes, within {@code patience} for all: a service that started
     * before its dependencies answered is restarted, and a check (itself a process in the container) can time out
     * while six JVMs share two cores. A check still failing at the end fails the test with its output.
     */
    void awaitHealthy(Duration patience, List<String> services) {
        await().atMost(patience).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            for (String service : services) {
                Podman.Result health = healthcheck(service);
                assertEquals(0, health.status(), service + "'s health check: " + health.output());
            }
        });
    }

    HttpResponse<String> get(int port, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A one-event native batch posted to the relay published on {@code port}. */
    HttpResponse<String> ingest(int port, String message) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/ingest"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"msg\":\"" + message + "\"}]}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
