package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar's collector ({@code mcpd serve}) run as a separate process, the way an operator runs it:
 * on SQLite it answers a native batch and {@code /v1/stats} and stops cleanly on SIGTERM; pointed at a PostgreSQL
 * that does not answer, it refuses to start — the schema migration at start needs the database — with one
 * {@code mcpd: …} line, a non-zero exit and no stack trace.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CollectorJarIT {

    /** What the JVM reports for a process that ended on SIGTERM after its shutdown hooks ran (128 + 15). */
    private static final int ENDED_BY_SIGTERM = 128 + 15;

    @TempDir
    Path dir;

    @Test
    void serveOnSqliteAnswersANativeBatchAndStatsAndStopsCleanlyOnSigterm() throws Exception {
        int port = PackagedJar.freePort();
        Path data = dir.resolve("store").resolve("mcpd.db");
        String batch = "{\"idempotency_key\":\"jar-1\",\"events\":[{\"a\":1},{\"b\":2},\"not an object\"]}";
        try (PackagedJar collector = PackagedJar.start(dir, port, Map.of(), "serve", "--listen", "127.0.0.1:" + port,
                "--data", data.toString())) {
            assertEquals("200 ok\n", get(collector, "/readyz"));
            assertEquals("200 {\"accepted\":2,\"duplicate\":0,\"rejected\":1}", post(collector, batch));
            assertEquals("200 {\"accepted\":0,\"duplicate\":3,\"rejected\":0}", post(collector, batch),
                    "the same key again: all its events are duplicates");
            assertEquals("200 {\"batches\":1,\"events\":2,\"duplicates\":3,\"conflicts\":0}", get(collector, "/v1/stats"));
            assertEquals("404", post(collector, "/v1/elsewhere", batch).substring(0, 3),
                    "a collector takes only its ingest paths");

            int status = collector.terminate();
            String log = Files.readString(collector.log(), StandardCharsets.UTF_8);
            assertTrue(Set.of(0, ENDED_BY_SIGTERM).contains(status),
                    "SIGTERM ends the collector normally (0 or 143), got " + status + ":\n" + collector.logTail(40));
            assertFalse(log.contains("\tat ") || log.contains("Exception"),
                    "start, requests and SIGTERM log no stack trace:\n" + collector.logTail(60));
            assertTrue(log.contains("shutdown in"), "Camel reports its orderly shutdown:\n" + collector.logTail(20));
            System.out.println("serve on SQLite: SIGTERM exit status " + status);
        }
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + data);
             Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT idempotency_key, events, rejected FROM batches")) {
            assertTrue(rs.next(), "the batch is in the SQLite file after the stop");
            assertEquals("jar-1", rs.getString(1));
            assertEquals(2, rs.getInt(2));
            assertEquals(1, rs.getInt(3));
            assertFalse(rs.next(), "stored once");
        }
    }

    @Test
    void serveWithAnUnreachablePostgresqlRefusesToStartWithOneLineAndNoStackTrace() {
        int closedPort = PackagedJar.freePort(); // nobody listens there
        String password = "pw-" + closedPort + "-not-to-be-printed";
        long started = System.nanoTime();
        PackagedJar.Result result = PackagedJar.runJar(dir, Map.of(), "serve",
                "--listen", "127.0.0.1:" + PackagedJar.freePort(),
                "--data", "postgres://mcpd:" + password + "@127.0.0.1:" + closedPort + "/mcpd");
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);

        assertNotEquals(0, result.status(), () -> "a collector without its store does not run: " + result);
        assertEquals(1, result.status(), () -> "a failure while running is exit status 1: " + result);
        assertEquals("", result.out(), result::toString);
        List<String> lines = result.errLines();
        assertEquals(1, lines.size(), () -> "exactly one line on stderr: " + result);
        assertTrue(lines.get(0).startsWith("mcpd: cannot prepare the store postgresql://127.0.0.1:" + closedPort
                + "/mcpd"), () -> "the line says which store could not be prepared: " + result);
        assertFalse(result.err().contains(password), () -> "the password is never printed: " + result);
        assertFalse(result.err().contains("\tat ") || result.err().contains("Exception"),
                () -> "no stack trace: " + result);
        System.out.println("serve with an unreachable PostgreSQL: exit " + result.status() + " after " + seconds
                + " s: " + lines.get(0));
    }

    private static String get(PackagedJar collector, String path) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(collector.uri(path))
                .timeout(Duration.ofSeconds(15)).GET().build(), HttpResponse.BodyHandlers.ofString());
        return answer.statusCode() + " " + answer.body();
    }

    private static String post(PackagedJar collector, String json) throws Exception {
        return post(collector, "/v1/ingest", json);
    }

    private static String post(PackagedJar collector, String path, String json) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(collector.uri(path))
                .timeout(Duration.ofSeconds(15)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        return answer.statusCode() + " " + answer.body();
    }
}
