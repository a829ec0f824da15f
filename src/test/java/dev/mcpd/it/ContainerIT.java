package dev.mcpd.it;

import static dev.mcpd.it.Podman.podman;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The container image, built and run for real: podman builds the unchanged deploy/docker/Dockerfile on the
 * stand-in base images deploy/docker/standin-images.sh makes (.ci/run runs it), then a collector container and a
 * relay container in front of it run read-only as the image's user; a request goes through both, the image's
 * HEALTHCHECK passes, and a stop ends the relay within seconds. Where podman cannot run containers, or the stand-ins
 * are missing, it says so and is skipped. The containers use the host's network, as a sandbox without podman's own
 * networks would ({@link ComposeUpIT} runs on podman's networks).
 */
// One podman project at a time: they share the image store and the stand-in images.
@ResourceLock("podman")
class ContainerIT {

    private static final String IMAGE = "localhost/mcpd:it";
    private static final String NAME = "mcpd-it-" + ProcessHandle.current().pid();

    /** Whether podman was usable here: without it the test is skipped, and there is nothing to remove. */
    private static boolean usable;

    @BeforeAll
    static void buildTheImage() throws Exception {
        Podman.assumeUsable(Podman.BASES);
        usable = true;
        Podman.build(IMAGE);
    }

    @AfterAll
    static void removeWhatWasMade() throws Exception {
        if (!usable) {
            return;
        }
        podman(Duration.ofSeconds(30), "rm", "-f", NAME + "-relay", NAME + "-collector");
        podman(Duration.ofSeconds(30), "volume", "rm", "-f", NAME + "-relay", NAME + "-collector");
    }

    private static Podman.Result run(String name, int port, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "-d", "--name", name, "--network", "host",
                "--read-only", "--tmpfs", "/tmp", "-v", name + ":/data", "-e", "MCPD_LISTEN=127.0.0.1:" + port));
        args.addAll(Podman.LIMITS);
        args.add(IMAGE);
        args.addAll(List.of(command));
        return podman(Duration.ofSeconds(60), args.toArray(String[]::new));
    }

    @Test
    void theImageRunsReadOnlyAsItsUserDeliversPassesItsHealthCheckAndStops() throws Exception {
        int collectorPort = PackagedJar.freePort();
        int relayPort = PackagedJar.freePort();
        Podman.Result collector = run(NAME + "-collector", collectorPort, "serve");
        assertEquals(0, collector.status(), collector.output());
        Podman.Result relay = run(NAME + "-relay", relayPort, "relay", "--upstream",
                "http://127.0.0.1:" + collectorPort);
        assertEquals(0, relay.status(), relay.output());

        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        await().atMost(Duration.ofSeconds(90)).ignoreExceptions().until(() -> client.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + relayPort + "/readyz")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
        HttpResponse<String> accepted = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relayPort
                + "/v1/ingest")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"from\":\"a container\"}]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(202, accepted.statusCode(), accepted.body());
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> client.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + collectorPort + "/v1/stats")).build(),
                HttpResponse.BodyHandlers.ofString()).body().contains("\"events\":1"));

        assertEquals("10001", podman(Duration.ofSeconds(30), "exec", NAME + "-relay", "id", "-u").output().strip(),
                "the image's own user");
        Podman.Result write = podman(Duration.ofSeconds(30), "exec", NAME + "-relay", "sh", "-c", "touch /opt/mcpd/x");
        assertTrue(write.status() != 0, "the root filesystem is read-only: " + write.output());
        Podman.Result health = podman(Duration.ofSeconds(30), "healthcheck", "run", NAME + "-relay");
        assertEquals(0, health.status(), "the image's HEALTHCHECK: " + health.output());

        long started = System.nanoTime();
        podman(Duration.ofSeconds(30), "stop", "-t", "10", NAME + "-relay");
        long stopMillis = (System.nanoTime() - started) / 1_000_000;
        Podman.Result exit = podman(Duration.ofSeconds(30), "inspect", "--format", "{{.State.ExitCode}}",
                NAME + "-relay");
        assertTrue(List.of("0", "143").contains(exit.output().strip()), "SIGTERM ends it: " + exit.output());
        assertTrue(stopMillis < 10_000, "stopped before podman's 10 s grace ran out (" + stopMillis + " ms)");
    }
}
