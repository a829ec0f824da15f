package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.relay.TestUpstream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worked examples of docs/customising.md, run with its own command — {@code bin/mcpd relay --routes
 * examples/routes --upstream …} from the repository — with this test's folders, port and upstream: every example
 * loads beside the others and does what the page says. And a second route at the same extension point stops the start
 * with one line, no stack trace.
 */
class ExampleRoutesIT {

    @TempDir
    Path dir;

    private static Path repository() {
        return Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    }

    private static int post(PackagedJar relay, String path, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(path)).header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    @Test
    void theDocumentedCommandLoadsEveryExampleAndEachDoesWhatThePageSays() throws Exception {
        Path audit = dir.resolve("audit");
        Path receipts = dir.resolve("receipts");
        Path inbox = Files.createDirectories(dir.resolve("inbox"));
        int port = PackagedJar.freePort();
        try (TestUpstream upstream = TestUpstream.start();
             PackagedJar relay = PackagedJar.startCommand(dir, repository(), port, Map.of(
                     "MCPD_JAR", PackagedJar.jar().toString(), "MCPD_AUDIT_DIR", audit.toString(),
                     "MCPD_RECEIPTS_DIR", receipts.toString(), "MCPD_INBOX_DIR", inbox.toString(),
                     "MCPD_LISTEN", "127.0.0.1:" + port,
                     "MCPD_DATA", dir.resolve("mcpd.db").toString()),
                     List.of("bin/mcpd", "relay", "--routes", "examples/routes", "--upstream",
                             upstream.url().toString()))) {
            assertEquals(403, post(relay, "/v1/debug/dump", new byte[] {1}));
            assertEquals(403, post(relay, "/v1/x/../debug/dump", new byte[] {2}), "dot segments change nothing");
            byte[] logs = {0x0a, 0x03, 'l', 'o', 'g'};
            assertEquals(200, post(relay, "/v1/logs", logs));
            // Camel's file producer writes in place: the file can exist before its line does.
            await().atMost(PATIENCE).ignoreExceptions().until(() -> Files.readString(receipts.resolve("1.txt"))
                    .startsWith("seq=1 target=/v1/logs "));
            try (Stream<Path> copies = Files.walk(audit)) {
                List<Path> files = copies.filter(Files::isRegularFile).toList();
                assertEquals(1, files.size());
                assertArrayEquals(logs, Files.readAllBytes(files.get(0)));
            }
            assertEquals(1, upstream.received().size(), "the refused requests never went upstream");
            byte[] export = "{\"resourceLogs\":[]}".getBytes(StandardCharsets.UTF_8);
            Files.write(inbox.resolve(".export.tmp"), export);
            Files.move(inbox.resolve(".export.tmp"), inbox.resolve("export.json"));
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 2);
            assertEquals("/v1/logs", upstream.received().get(1).uri());
            assertArrayEquals(export, upstream.received().get(1).body());
        }
    }

    @Test
    void twoRoutesAtOneExtensionPointStopTheStartWithOneLineAndNoStackTrace() throws Exception {
        Path routes = Files.createDirectories(dir.resolve("routes"));
        Files.copy(repository().resolve("examples/routes/before-spool.camel.yaml"),
                routes.resolve("before-spool.camel.yaml"));
        Files.writeString(routes.resolve("audit.camel.yaml"), "- route:\n    id: audit\n"
                + "    routeConfigurationId: mcpd-extension\n    from:\n      uri: direct:mcpd-before-spool\n"
                + "      steps:\n        - log: \"seen\"\n");
        PackagedJar.Result result = PackagedJar.runJar(dir, Map.of(), "relay", "--routes", routes.toString(),
                "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:" + PackagedJar.freePort(), "--data",
                dir.resolve("mcpd.db").toString());
        assertEquals(1, result.status(), result::toString);
        List<String> mcpdLines = result.errLines().stream().filter(l -> l.startsWith("mcpd: ")).toList();
        assertEquals(1, mcpdLines.size(), result::toString);
        assertTrue(mcpdLines.get(0).contains("Multiple consumers for the same endpoint is not allowed:"
                + " direct://mcpd-before-spool"), mcpdLines.get(0));
        assertFalse(result.err().contains("\tat ") || result.err().contains("Exception:"), result::toString);
    }
}
