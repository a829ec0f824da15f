package dev.mcpd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process's default locale changes nothing it writes or looks up: under Turkish, {@code "SQLITE".toLowerCase()}
 * is {@code "sqlıte"} (dotless ı) and the migrations were not found; under Egyptian Arabic, {@code %020d} writes
 * Arabic-Indic digits, and spool segments would get names the next start does not recognise.
 */
class DefaultLocaleIT {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    private static int post(PackagedJar server, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(server.uri("/v1/ingest")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    @Test
    void theCollectorFindsItsMigrationsUnderATurkishDefaultLocale() throws Exception {
        int port = PackagedJar.freePort();
        try (PackagedJar collector = PackagedJar.start(dir, port, Map.of(), List.of("-Duser.language=tr",
                "-Duser.country=TR"), "serve", "--listen", "127.0.0.1:" + port, "--data",
                dir.resolve("mcpd.db").toString())) {
            assertEquals(200, post(collector, "{\"events\":[{\"İ\":\"ı\"}]}"));
        }
    }

    @Test
    void spoolFilesAreNamedInAsciiDigitsUnderAnArabicDefaultLocale() throws Exception {
        int port = PackagedJar.freePort();
        try (PackagedJar relay = PackagedJar.start(dir, port, Map.of(), List.of("-Duser.language=ar",
                "-Duser.country=EG"), "relay", "--listen", "127.0.0.1:" + port, "--data",
                dir.resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:9")) {
            assertEquals(202, post(relay, "{\"events\":[{}]}"));
            try (Stream<Path> files = Files.list(dir.resolve("mcpd.spool").resolve("relay"))) {
                List<String> names = files.filter(Files::isRegularFile).map(f -> f.getFileName().toString())
                        .filter(n -> !n.equals("id") && !n.equals("spool.lock")).toList();
                assertTrue(!names.isEmpty() && names.stream().allMatch(n -> n.matches("[0-9]{20}\\.(seg|cred|ack)")),
                        names.toString());
            }
            String id = Files.readString(dir.resolve("mcpd.spool").resolve("relay").resolve("id")).strip();
            assertTrue(id.matches("[0-9a-f]{32}"), "the spool's id in ASCII hex digits: " + id);
        }
    }
}
