package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay's routes run on its event loops; an operator's route at an extension point may block, and runs on a
 * worker thread: a request waits for its own operator step, nothing else does.
 */
class BlockingExtensionRouteTest {

    /** A before-spool route that blocks its thread for three seconds (Thread.sleep, not an asynchronous delay). */
    private static final String SLOW_ROUTE = """
            - route:
                id: slow-before-spool
                routeConfigurationId: mcpd-extension
                from:
                  uri: direct:mcpd-before-spool
                  steps:
                    - setHeader:
                        name: slept
                        simple: "${bean:java.lang.Thread?method=sleep(3000)}"
            """;

    @TempDir
    Path dir;

    @Test
    void aBlockingOperatorRouteDelaysOnlyItsOwnRequestsNotTheProbesNorOtherConnections() throws Exception {
        Path routes = Files.createDirectories(dir.resolve("routes"));
        Files.writeString(routes.resolve("slow.camel.yaml"), SLOW_ROUTE);
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_ROUTES", routes.toString()))) {
            List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
            for (int i = 0; i < 8; i++) { // on 8 connections: every event loop holds some
                HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                slow.add(own.sendAsync(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"slow\":" + i + "}]}")).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            // all 8 are in the operator's route now, blocking its threads
            await().atMost(PATIENCE).until(() -> relay.application().camel().getInflightRepository()
                    .size("slow-before-spool") == 8);
            long started = System.nanoTime();
            HttpResponse<String> healthz = HTTP.send(HttpRequest.newBuilder(relay.uri("/healthz"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> metrics = HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            long answeredMillis = (System.nanoTime() - started) / 1_000_000;
            assertEquals(200, healthz.statusCode());
            assertEquals(200, metrics.statusCode());
            assertTrue(slow.stream().noneMatch(CompletableFuture::isDone),
                    "the slow requests still wait for their operator step while the probes were answered ("
                            + answeredMillis + " ms)");
            for (CompletableFuture<HttpResponse<String>> answer : slow) {
                assertEquals(202, answer.get(30, TimeUnit.SECONDS).statusCode(), "each is spooled once its step is done");
            }
        }
    }
}
