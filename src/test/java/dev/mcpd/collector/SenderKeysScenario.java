package dev.mcpd.collector;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.store.JdbcStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

/**
 * Keys belong to a sender, told apart by the credential it presents: what a collector on any store must answer. Run
 * on SQLite by {@link SenderKeysTest} and on PostgreSQL by {@link CollectorPostgresTest}.
 */
final class SenderKeysScenario {

    private static final ObjectMapper JSON = new ObjectMapper();

    private SenderKeysScenario() {
    }

    static void run(URI collector) throws Exception {
        String key = "shared-" + UUID.randomUUID();
        String first = "{\"idempotency_key\":\"" + key + "\",\"events\":[{\"a\":1}]}";
        String other = "{\"idempotency_key\":\"" + key + "\",\"events\":[{\"b\":2},{\"c\":3}]}";
        JsonNode before = stats(collector);

        assertEquals("200 {\"accepted\":1,\"duplicate\":0,\"rejected\":0}",
                post(collector, first, "Authorization", "Bearer sender-a"));
        assertEquals("200 {\"accepted\":2,\"duplicate\":0,\"rejected\":0}",
                post(collector, other, "Authorization", "Bearer sender-b"),
                "another sender's batch under the same key is its own, stored");
        assertEquals("200 {\"accepted\":1,\"duplicate\":0,\"rejected\":0}", post(collector, first, null, null),
                "a request without a credential is a sender of its own too");
        assertEquals("200 {\"accepted\":0,\"duplicate\":1,\"rejected\":0}",
                post(collector, first, "x-mcpd-key", "sender-a"),
                "the same credential presented as x-mcpd-key is the same sender: a re-send");
        assertEquals("200 {\"accepted\":0,\"duplicate\":2,\"rejected\":0}",
                post(collector, other, "Authorization", "Bearer sender-a"),
                "the same key from the same sender with another body is still a duplicate");

        JsonNode after = stats(collector);
        assertEquals(3, after.get("batches").asLong() - before.get("batches").asLong(), after::toString);
        assertEquals(3, after.get("duplicates").asLong() - before.get("duplicates").asLong(), after::toString);
        assertEquals(1, after.get("conflicts").asLong() - before.get("conflicts").asLong(),
                "only the copy with another body is a conflict: " + after);
        String metrics = HTTP.send(HttpRequest.newBuilder(collector.resolve("/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.lines().anyMatch(line -> line.startsWith("mcpd_collector_key_conflicts_total ")
                && Double.parseDouble(line.substring(line.indexOf(' ') + 1)) >= 1), metrics);
    }

    /**
     * Lays out a store as the first schema made it (before keys belonged to senders), holding one batch under
     * {@code old-key}; {@code dialect} names the scripts' folder, {@code body} is the SQL literal of its body.
     */
    static void createVersionOneStore(Statement statement, String dialect, String body) throws Exception {
        String v1;
        try (var in = JdbcStore.class.getResourceAsStream("/db/" + dialect + "/V1__archive.sql")) {
            v1 = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (String sql : v1.split(";")) {
            if (!sql.lines().allMatch(line -> line.isBlank() || line.strip().startsWith("--"))) {
                statement.execute(sql);
            }
        }
        statement.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)");
        statement.execute("INSERT INTO schema_version VALUES (1)");
        statement.execute("INSERT INTO batches (idempotency_key, target, content_type, content_encoding,"
                + " received_at_ms, events, rejected, body) VALUES ('old-key', '/v1/ingest', 'application/json',"
                + " '', " + System.currentTimeMillis() + ", 1, 0, " + body + ")");
    }

    private static String post(URI collector, String json, String header, String value) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(collector.resolve("/v1/ingest"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (header != null) {
            request.header(header, value);
        }
        HttpResponse<String> answer = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        return answer.statusCode() + " " + answer.body();
    }

    private static JsonNode stats(URI collector) throws IOException, InterruptedException {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(collector.resolve("/v1/stats")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), answer.body());
        return JSON.readTree(answer.body());
    }
}
