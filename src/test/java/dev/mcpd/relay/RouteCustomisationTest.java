package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.http.RoleHost;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 8: operators' YAML routes (--routes) hook into the extension points; the shipped examples act. */
class RouteCustomisationTest {

    static final Path EXAMPLES = Path.of("examples/routes");

    @TempDir
    Path dir;

    /** A --routes folder holding only the named example. */
    private Path routesWith(String example) throws IOException {
        Path routes = Files.createDirectories(dir.resolve("routes"));
        Files.copy(EXAMPLES.resolve(example), routes.resolve(example));
        return routes;
    }

    private RunningRelay relay(Path routes, String upstream, Map<String, String> camelProperties) {
        RelayApplication.Tuning standard = RelayApplication.Tuning.standard();
        return RunningRelay.start(dir, Map.of("MCPD_ROUTES", routes.toString(), "MCPD_UPSTREAMS", upstream),
                new RelayApplication.Tuning(standard.backoff(), standard.probeInterval(), standard.upWindow(),
                        camelProperties));
    }

    private static HttpResponse<String> post(RunningRelay relay, String path, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(path)).header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theBeforeSpoolExampleRefusesTheDebugPathHoweverItIsWritten() throws Exception {
        try (RunningRelay relay = relay(routesWith("before-spool.camel.yaml"), "http://127.0.0.1:9",
                Map.of("mcpd.audit.dir", dir.resolve("audit").toString()))) {
            for (String debug : List.of("/v1/debug/dump", "/v1/x/../debug/dump", "/v1/%64ebug/dump", "/v1/debug")) {
                HttpResponse<String> refused = post(relay, debug, "x".getBytes(StandardCharsets.UTF_8));
                assertEquals(403, refused.statusCode(), debug);
                assertEquals("debug data is not relayed from this region\n", refused.body());
            }
            assertEquals(202, post(relay, "/v1/ingest", "{}".getBytes(StandardCharsets.UTF_8)).statusCode());
            assertEquals(202, post(relay, "/v1/debugger", "{}".getBytes(StandardCharsets.UTF_8)).statusCode());
            assertEquals(List.of("/v1/ingest", "/v1/debugger"), relay.spooled().stream()
                    .map(e -> e.request().target()).toList());
        }
    }

    @Test
    void theBeforeSpoolExampleKeepsEachLogExportAsReceivedBesideTheSpool() throws Exception {
        Path audit = dir.resolve("audit");
        try (RunningRelay relay = relay(routesWith("before-spool.camel.yaml"), "http://127.0.0.1:9",
                Map.of("mcpd.audit.dir", audit.toString()))) {
            byte[] logs = {0x0a, 0x03, 'l', 'o', 'g', (byte) 0xff};
            assertEquals(200, post(relay, "/v1/logs", logs).statusCode());
            assertEquals(200, post(relay, "/v1/traces", new byte[] {1, 2}).statusCode());
            List<Path> copies;
            try (Stream<Path> files = Files.walk(audit)) {
                copies = files.filter(Files::isRegularFile).toList();
            }
            assertEquals(1, copies.size(), "only the log export is copied");
            assertArrayEquals(logs, Files.readAllBytes(copies.get(0)));
            assertEquals(2, relay.spooled().size(), "and both are spooled");
            assertArrayEquals(logs, relay.spooled().get(0).request().body(), "the copy does not change the body");
        }
    }

    @Test
    void theAfterDeliveryExampleWritesOneReceiptPerDelivery() throws Exception {
        Path receipts = dir.resolve("receipts");
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = relay(routesWith("after-delivery.camel.yaml"), upstream.url().toString(),
                     Map.of("mcpd.receipts.dir", receipts.toString()))) {
            assertEquals(202, post(relay, "/v1/ingest", "{\"events\":[]}".getBytes(StandardCharsets.UTF_8))
                    .statusCode());
            await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(receipts.resolve("1.txt")));
            String receipt = Files.readString(receipts.resolve("1.txt"));
            assertTrue(receipt.startsWith("seq=1 target=/v1/ingest key=relay-"), receipt);
            assertTrue(receipt.endsWith("upstream=" + upstream.url() + " status=200\n"), receipt);
        }
    }

    @Test
    void aBrokenRouteFileStopsTheStartWithOneLineNamingTheFileAndLine() throws Exception {
        Path routes = Files.createDirectories(dir.resolve("broken"));
        Files.writeString(routes.resolve("oops.camel.yaml"), "- route:\n    id: oops\n    from:\n      uri: direct:x\n"
                + "      steps:\n        - notAStep: {}\n");
        RoleHost.StartFailure failure = assertThrows(RoleHost.StartFailure.class,
                () -> relay(routes, "http://127.0.0.1:9", Map.of()));
        assertEquals(1, failure.getMessage().lines().count(), failure.getMessage());
        assertTrue(failure.getMessage().contains("oops.camel.yaml"), failure.getMessage());
        assertTrue(failure.getMessage().contains("line 6"), failure.getMessage());
    }
}
