package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.cli.Mcpd;
import dev.mcpd.http.RoleHost;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.Ports;
import dev.mcpd.wire.DerivedIdempotencyKey;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Issue 8: operators' YAML routes (--routes) hook into the extension points; the shipped examples act. */
class RouteCustomisationTest {

    static final Path EXAMPLES = Path.of("examples/routes");
    static final Path CUSTOMISING = Path.of("docs/customising.md");
    /** A line of the relay's log (logback.xml's pattern), as opposed to what the command itself prints. */
    private static final Pattern LOG_LINE =
            Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\S+ (TRACE|DEBUG|INFO|WARN|ERROR) .*");

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
    void theSpoolFilesExampleDeliversEachDroppedFileAsALogExportAndMovesItAside() throws Exception {
        Path inbox = Files.createDirectories(dir.resolve("inbox"));
        byte[] export = "{\"resourceLogs\":[]}".getBytes(StandardCharsets.UTF_8);
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = relay(routesWith("spool-files.camel.yaml"), upstream.url().toString(),
                     Map.of("mcpd.inbox.dir", inbox.toString()))) {
            Files.writeString(inbox.resolve("notes.txt"), "not an export");
            Files.write(inbox.resolve(".batch-1.tmp"), export);
            Files.move(inbox.resolve(".batch-1.tmp"), inbox.resolve("batch-1.json"));
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 1);
            TestUpstream.Received got = upstream.received().get(0);
            assertEquals("POST", got.method());
            assertEquals("/v1/logs", got.uri());
            assertEquals("application/json", got.header("Content-Type"));
            assertEquals(DerivedIdempotencyKey.of("/v1/logs", "", export), got.header("Idempotency-Key"),
                    "the same file taken again after a crash gets the same key");
            assertArrayEquals(export, got.body());
            await().atMost(PATIENCE).until(() -> Files.exists(inbox.resolve(".done/batch-1.json")));
            assertTrue(Files.exists(inbox.resolve("notes.txt")), "only *.json files are taken");
            assertEquals(1, upstream.received().size());
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

    @Test
    @Timeout(60) // a relay that starts after all would run until stopped
    void aRouteWithAnUnknownStepIsTheLineTheCustomisingPageShows() throws Exception {
        assertEquals(DocExample.block(CUSTOMISING, "oops-route-error"),
                printedByAFailedStart("oops.camel.yaml", DocExample.block(CUSTOMISING, "oops-route")));
    }

    @Test
    @Timeout(60)
    void twoRoutesAtOneExtensionPointAreTheLineTheCustomisingPageShows() throws Exception {
        assertEquals(DocExample.block(CUSTOMISING, "two-consumers-route-error"),
                printedByAFailedStart("before-spool.camel.yaml", DocExample.block(CUSTOMISING, "two-consumers-route")));
    }

    /**
     * What {@code mcpd relay --routes DIR} prints on stderr, its log lines left out, when DIR holds only {@code yaml}
     * as {@code file}; it must exit 1. The page's folder ({@code /etc/mcpd/routes}) and the default listen address
     * stand in for this test's own: they are the only parts that differ from run to run.
     */
    private String printedByAFailedStart(String file, String yaml) throws IOException {
        Path routes = Files.createDirectories(dir.resolve("routes"));
        Files.writeString(routes.resolve(file), yaml);
        String listen = "127.0.0.1:" + Ports.free();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        PrintStream before = System.err;
        int status;
        // The relay prints its one line to the process's stderr (as bin/mcpd shows it), not to the command's writer.
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        try {
            status = Mcpd.execute(Map.of(), new PrintWriter(out), new PrintWriter(err), "relay", "--routes",
                    routes.toString(), "--upstream", "http://127.0.0.1:9", "--listen", listen, "--data",
                    dir.resolve("mcpd.db").toString());
        } finally {
            System.setErr(before);
        }
        String printed = err + stderr.toString(StandardCharsets.UTF_8);
        assertEquals(1, status, printed);
        assertEquals("", out.toString());
        StringBuilder lines = new StringBuilder();
        printed.lines().filter(line -> !LOG_LINE.matcher(line).matches()).forEach(line -> lines.append(line)
                .append('\n'));
        return lines.toString().replace(routes.toAbsolutePath().toString(), "/etc/mcpd/routes")
                .replace(listen, "0.0.0.0:4317");
    }
}
