package dev.mcpd.collector;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.testing.Ports;
import dev.mcpd.wire.RelayBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The collector ({@code mcpd serve}, in this JVM) on PostgreSQL: the same answers and deduplication as on
 * SQLite, the schema migrated at start, two replicas on one database racing on the same key, and {@code /readyz} and
 * ingest while the database is away.
 *
 * <p>Every test archives in a schema of its own ({@code ?currentSchema=…} on the {@code postgres://} URL, which the
 * collector passes to the JDBC driver), created empty before the test and dropped after it: the test role
 * {@code mcpd} owns the {@code mcpd} database but may not {@code CREATE DATABASE}. Tests that stop the server start it
 * again in a {@code finally}; Surefire runs the test classes one after the other.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CollectorPostgresTest {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private TestPostgres postgres;
    private String schema;
    private final List<CollectorApplication> collectors = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void freshSchema() throws SQLException {
        postgres = TestPostgres.require();
        postgres.start(); // a test that failed to bring it back must not take the others down with it
        schema = postgres.createSchema("mcpd_test_");
    }

    @AfterEach
    void dropSchema() throws SQLException {
        for (CollectorApplication collector : collectors) {
            collector.close();
        }
        if (postgres != null && schema != null) {
            postgres.start();
            postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    // ---------------------------------------------------------------------------------------------- tests

    @Test
    void aNativeBatchIsAnsweredAndDeduplicatedOnPostgresqlAsOnSqlite() throws Exception {
        URI collector = startCollector();

        String keyed = "{\"idempotency_key\":\"pg-native-1\",\"events\":[{\"a\":1},{\"b\":2},{\"c\":3}]}";
        assertAnswer(200, "{\"accepted\":3,\"duplicate\":0,\"rejected\":0}", post(collector, keyed, Map.of()));
        assertAnswer(200, "{\"accepted\":0,\"duplicate\":3,\"rejected\":0}", post(collector, keyed, Map.of()),
                "the same key again is a duplicate and stores nothing");

        String mixed = "{\"events\":[{\"ok\":true},42,\"text\",{\"ok\":false}]}";
        assertAnswer(200, "{\"accepted\":2,\"duplicate\":0,\"rejected\":2}",
                post(collector, mixed, Map.of("Idempotency-Key", "pg-header-1")),
                "JSON objects are accepted, anything else rejected; the header key is used");
        assertAnswer(200, "{\"accepted\":0,\"duplicate\":4,\"rejected\":0}",
                post(collector, mixed, Map.of("Idempotency-Key", "pg-header-1")),
                "a batch seen before answers all its events as duplicate");

        String bodyBeatsHeader = "{\"idempotency_key\":\"pg-body-key\",\"events\":[{\"x\":1}]}";
        assertAnswer(200, "{\"accepted\":1,\"duplicate\":0,\"rejected\":0}",
                post(collector, bodyBeatsHeader, Map.of("Idempotency-Key", "pg-native-1")),
                "the body's key beats the header's (pg-native-1 was seen, pg-body-key was not)");

        String unkeyed = "{\"events\":[{\"no\":\"key\"}]}";
        assertAnswer(200, "{\"accepted\":1,\"duplicate\":0,\"rejected\":0}", post(collector, unkeyed, Map.of()));
        assertAnswer(200, "{\"accepted\":1,\"duplicate\":0,\"rejected\":0}", post(collector, unkeyed, Map.of()),
                "without a key no copy can be recognised: stored every time");

        assertEquals(new Stats(5, 8, 7), stats(collector), "batches 3 keyed + 2 unkeyed; events 3+2+1+1+1;"
                + " duplicates 3+4");
        try (Connection connection = connect()) {
            assertEquals(List.of("pg-body-key", "pg-header-1", "pg-native-1"),
                    strings(connection, "SELECT idempotency_key FROM batches WHERE idempotency_key IS NOT NULL"
                            + " ORDER BY idempotency_key"),
                    "the rows are in this test's schema, one per key");
            assertEquals(List.of(keyed), strings(connection,
                    "SELECT convert_from(body, 'UTF8') FROM batches WHERE idempotency_key = 'pg-native-1'"),
                    "the body is stored as received");
            assertEquals(List.of("2"), strings(connection,
                    "SELECT count(*) FROM batches WHERE idempotency_key IS NULL"));
        }
    }

    @Test
    void theSchemaIsCreatedAtStartAndASecondStartFindsItWithTheDataKept() throws Exception {
        try (Connection connection = connect()) {
            assertEquals(List.of(), tables(connection), "the schema starts empty");
        }
        String batch = "{\"idempotency_key\":\"survives-restart\",\"events\":[{\"n\":1},{\"n\":2}]}";
        int port = Ports.free();
        CollectorApplication first = CollectorApplication.start(config(port));
        try {
            try (Connection connection = connect()) {
                assertEquals(List.of("batches", "duplicates", "idempotency_keys", "leases", "schema_version"), tables(connection),
                        "the first start creates the schema");
                assertEquals(List.of("1", "2", "3"), strings(connection, "SELECT version FROM schema_version ORDER BY version"));
            }
            assertAnswer(200, "{\"accepted\":2,\"duplicate\":0,\"rejected\":0}", post(uri(port), batch, Map.of()));
        } finally {
            first.close();
        }

        URI second = startCollector();
        assertEquals(new Stats(1, 2, 0), stats(second), "the second start keeps what the first stored");
        assertAnswer(200, "{\"accepted\":0,\"duplicate\":2,\"rejected\":0}", post(second, batch, Map.of()),
                "and the keys it recorded");
        try (Connection connection = connect()) {
            assertEquals(List.of("1", "2", "3"), strings(connection, "SELECT version FROM schema_version ORDER BY version"),
                    "the second start migrates nothing");
            assertEquals(List.of("batches", "duplicates", "idempotency_keys", "leases", "schema_version"), tables(connection));
        }
    }

    @Test
    void twoReplicasStartingTogetherOnAnEmptySchemaMigrateItOnce() throws Exception {
        int[] ports = {Ports.free(), Ports.free()};
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService starters = Executors.newFixedThreadPool(2);
        try {
            List<Future<CollectorApplication>> starting = new ArrayList<>();
            for (int port : ports) {
                starting.add(starters.submit(() -> {
                    go.await();
                    CollectorApplication collector = CollectorApplication.start(config(port));
                    collectors.add(collector);
                    return collector;
                }));
            }
            go.countDown();
            for (Future<CollectorApplication> started : starting) {
                started.get(60, TimeUnit.SECONDS); // an exception from either start fails the test here
            }
        } finally {
            starters.shutdownNow();
        }
        try (Connection connection = connect()) {
            assertEquals(List.of("1", "2", "3"), strings(connection, "SELECT version FROM schema_version ORDER BY version"),
                    "the advisory lock lets one replica migrate: each version recorded once");
        }
        for (int port : ports) {
            assertEquals(new Stats(0, 0, 0), stats(uri(port)));
        }
    }

    @Test
    void twoCollectorsOnOnePostgresqlReceivingTheSameKeyedBatchConcurrentlyStoreItOnce() throws Exception {
        URI[] replicas = {startCollector(), startCollector()};
        int copies = 50;
        int events = 3;
        String batch = "{\"idempotency_key\":\"raced-" + schema + "\",\"events\":[{\"e\":1},{\"e\":2},{\"e\":3}]}";
        for (URI replica : replicas) {
            assertEquals(new Stats(0, 0, 0), stats(replica), "both replicas answer before the race");
        }

        CountDownLatch ready = new CountDownLatch(copies);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService senders = Executors.newFixedThreadPool(copies);
        List<Answer> answers = new ArrayList<>();
        try {
            List<Future<Answer>> pending = new ArrayList<>();
            for (int i = 0; i < copies; i++) {
                URI replica = replicas[i % 2];
                pending.add(senders.submit(() -> {
                    ready.countDown();
                    go.await();
                    return post(replica, batch, Map.of());
                }));
            }
            assertTrue(ready.await(30, TimeUnit.SECONDS), "every sender is waiting at the start line");
            go.countDown();
            for (Future<Answer> answer : pending) {
                answers.add(answer.get(60, TimeUnit.SECONDS));
            }
        } finally {
            senders.shutdownNow();
        }

        for (Answer answer : answers) {
            assertEquals(200, answer.status(), () -> "every copy is answered 200: " + answer);
        }
        long stored = answers.stream()
                .filter(a -> a.body().equals("{\"accepted\":" + events + ",\"duplicate\":0,\"rejected\":0}")).count();
        long duplicates = answers.stream()
                .filter(a -> a.body().equals("{\"accepted\":0,\"duplicate\":" + events + ",\"rejected\":0}")).count();
        assertEquals(1, stored, () -> "exactly one copy is stored: " + answers);
        assertEquals(copies - 1, duplicates, () -> "every other copy is a duplicate: " + answers);
        for (URI replica : replicas) {
            assertEquals(new Stats(1, events, (long) (copies - 1) * events), stats(replica),
                    "either replica reports the shared store: " + replica);
        }
        try (Connection connection = connect()) {
            assertEquals(List.of("1"), strings(connection, "SELECT count(*) FROM batches"));
            assertEquals(List.of(String.valueOf(copies - 1)), strings(connection, "SELECT count(*) FROM duplicates"));
        }
    }

    @Test
    void readyzAnswers503WhilePostgresqlIsStoppedAndOkOnceItIsBack() throws Exception {
        URI collector = startCollector();
        assertAnswer(200, "ok\n", get(collector, "/readyz"));

        postgres.stop();
        try {
            Answer[] down = new Answer[1];
            await("/readyz answers 503 while PostgreSQL is stopped").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> (down[0] = get(collector, "/readyz")).status() == 503);
            List<String> lines = down[0].body().lines().toList();
            assertEquals(1, lines.size(), () -> "one line: " + down[0]);
            assertTrue(lines.get(0).startsWith("unavailable: the store does not answer: "), () -> "why: " + down[0]);
            assertFalse(down[0].body().contains("\tat ") || down[0].body().contains("password"), down[0]::body);
            assertAnswer(200, "ok\n", get(collector, "/healthz"), "liveness is not readiness");
            System.out.println("readyz while PostgreSQL is stopped: " + down[0]);
        } finally {
            postgres.start();
        }

        await("/readyz answers 200 ok once PostgreSQL is back").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> get(collector, "/readyz").equals(new Answer(200, "ok\n", Map.of())));
    }

    @Test
    void ingestWhilePostgresqlIsStoppedAnswers503WithRetryAfterAndTheResentBatchIsStoredOnce() throws Exception {
        URI collector = startCollector();
        String before = "{\"idempotency_key\":\"before-outage\",\"events\":[{\"t\":0}]}";
        String during = "{\"idempotency_key\":\"during-outage\",\"events\":[{\"t\":1},{\"t\":2}]}";
        String unkeyed = "{\"events\":[{\"t\":\"unkeyed during outage\"}]}";
        assertAnswer(200, "{\"accepted\":1,\"duplicate\":0,\"rejected\":0}", post(collector, before, Map.of()));

        postgres.stop();
        try {
            for (String batch : List.of(during, unkeyed)) {
                Answer refused = post(collector, batch, Map.of());
                assertEquals(503, refused.status(), refused::toString);
                assertEquals(List.of("5"), refused.headers().get("retry-after"), refused::toString);
                assertEquals(1, refused.body().lines().count(), () -> "one line: " + refused);
                System.out.println("ingest while PostgreSQL is stopped: " + refused);
            }
            Answer stats = get(collector, "/v1/stats");
            assertEquals(503, stats.status(), () -> "stats cannot be read either: " + stats);
        } finally {
            postgres.start();
        }

        await("the collector reaches PostgreSQL again").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> get(collector, "/readyz").status() == 200);
        assertAnswer(200, "{\"accepted\":2,\"duplicate\":0,\"rejected\":0}", post(collector, during, Map.of()),
                "the batch refused with 503 was not stored: the re-send is accepted");
        assertAnswer(200, "{\"accepted\":1,\"duplicate\":0,\"rejected\":0}", post(collector, unkeyed, Map.of()));
        assertAnswer(200, "{\"accepted\":0,\"duplicate\":2,\"rejected\":0}", post(collector, during, Map.of()),
                "and a second re-send is a duplicate");
        assertEquals(new Stats(3, 4, 2), stats(collector), "before + during + unkeyed, each once");
        try (Connection connection = connect()) {
            assertEquals(List.of("1"), strings(connection,
                    "SELECT count(*) FROM batches WHERE convert_from(body, 'UTF8') = '" + unkeyed + "'"),
                    "the unkeyed batch refused during the outage was not half-stored");
        }
    }

    @Test
    void aRelayBatchIsArchivedEntryByEntryWhenItsRowsGoInOneStatementPerTable() throws Exception {
        URI collector = startCollector();
        String stored = key("stored");
        String changed = key("changed");
        assertEquals(200, post(collector, "{\"events\":[{\"s\":1}]}", Map.of("Idempotency-Key", stored)).status());
        assertEquals(200, post(collector, "{\"events\":[{\"c\":1}]}", Map.of("Idempotency-Key", changed)).status());
        String first = key("first");
        String second = key("second");
        byte[] firstBody = "{\"events\":[{\"a\":1},{\"a\":2}]}".getBytes(StandardCharsets.UTF_8);
        List<RelayBatch.Entry> entries = List.of(
                relayEntry("/v1/ingest", first, firstBody),
                relayEntry("/v1/ingest", second, "{\"events\":[{\"b\":1}]}"),
                relayEntry("/v1/ingest", first, firstBody),
                relayEntry("/v1/ingest", stored, "{\"events\":[{\"s\":1}]}"),
                relayEntry("/v1/ingest", changed, "{\"events\":[{\"c\":2}]}"),
                relayEntry("/v1/elsewhere", key("elsewhere"), "{}"));
        long conflictsBefore = JSON.readTree(get(collector, "/v1/stats").body()).get("conflicts").asLong();

        Answer answer = send(HttpRequest.newBuilder(collector.resolve(RelayBatch.PATH))
                .timeout(REQUEST_TIMEOUT).header("Content-Type", RelayBatch.CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(RelayBatch.encode(entries))));

        assertEquals(200, answer.status(), answer.body());
        List<String> outcomes = new ArrayList<>();
        JSON.readTree(answer.body()).get("entries").forEach(o -> outcomes.add(o.get("status") + " "
                + o.path("accepted").asInt() + "/" + o.path("duplicate").asInt()));
        assertEquals(List.of("200 2/0", "200 1/0", "200 0/2", "200 0/1", "200 0/1", "404 0/0"), outcomes,
                "new, new, the first again in the same batch, stored before, stored before with another body, refused");
        assertEquals(1, JSON.readTree(get(collector, "/v1/stats").body()).get("conflicts").asLong() - conflictsBefore,
                "the key that came with another body");
        try (Connection connection = connect()) {
            assertEquals(List.of("1", "1", "1", "1"), strings(connection, "SELECT count(*) FROM batches WHERE"
                    + " idempotency_key IN ('" + first + "', '" + second + "', '" + stored + "', '" + changed + "')"
                    + " GROUP BY idempotency_key"), "each key's batch stored once");
            List<String> row = strings(connection, "SELECT convert_from(body, 'UTF8') || ' ' || received_at_ms FROM"
                    + " batches WHERE idempotency_key = '" + first + "'");
            assertEquals(1, row.size());
            assertEquals(new String(firstBody, StandardCharsets.UTF_8), row.get(0).substring(0,
                    row.get(0).lastIndexOf(' ')), "the entry's bytes");
            long receivedAt = Long.parseLong(row.get(0).substring(row.get(0).lastIndexOf(' ') + 1));
            // The relay's clock is this host's here: how long it held the entry, counted back from the batch's
            // arrival, gives its receive time within the batch's trip.
            assertTrue(Math.abs(receivedAt - 1_700_000_000_000L) < 5_000, "the relay's time: " + receivedAt);
            assertEquals(List.of("0"), strings(connection, "SELECT count(*) FROM batches WHERE target = '/v1/elsewhere'"));
        }
    }

    private static RelayBatch.Entry relayEntry(String target, String key, String json) {
        return relayEntry(target, key, json.getBytes(StandardCharsets.UTF_8));
    }

    private static RelayBatch.Entry relayEntry(String target, String key, byte[] body) {
        return new RelayBatch.Entry("POST", target, "application/json", "", key, 1_700_000_000_000L,
                body);
    }

    private static String key(String name) {
        return name + "-" + UUID.randomUUID();
    }

    @Test
    void keysBelongToTheirSenderOnPostgresqlAsOnSqlite() throws Exception {
        SenderKeysScenario.run(startCollector());
    }

    @Test
    void aStoreFromBeforeKeysBelongedToSendersIsMigratedWithItsKeys() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            SenderKeysScenario.createVersionOneStore(statement, "postgres", "'\\x7b7d'");
        }
        URI collector = startCollector();
        String copy = "{\"idempotency_key\":\"old-key\",\"events\":[{\"a\":1}]}";
        for (String credential : new String[] {"Bearer one", "Bearer two"}) {
            assertAnswer(200, "{\"accepted\":0,\"duplicate\":1,\"rejected\":0}",
                    post(collector, copy, Map.of("Authorization", credential)),
                    "a key stored before the upgrade is a duplicate whoever sends it again");
        }
        try (Connection connection = connect()) {
            assertEquals(List.of("1", "2", "3"), strings(connection, "SELECT version FROM schema_version ORDER BY version"));
            assertEquals(List.of("1"), strings(connection, "SELECT count(*) FROM batches"), "the old batch is kept");
        }
        Answer batch = send(HttpRequest.newBuilder(collector.resolve(RelayBatch.PATH))
                .timeout(REQUEST_TIMEOUT).header("Content-Type", RelayBatch.CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(RelayBatch.encode(List.of(
                        relayEntry("/v1/ingest", "new-key", "{\"events\":[{\"n\":1}]}"),
                        relayEntry("/v1/ingest", "old-key", "{\"events\":[{\"a\":1}]}"))))));
        List<Integer> duplicates = new ArrayList<>();
        JSON.readTree(batch.body()).get("entries").forEach(o -> duplicates.add(o.get("duplicate").asInt()));
        assertEquals(List.of(0, 1), duplicates, "in a relay batch too, only the old key is a duplicate: " + batch.body());
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private record Answer(int status, String body, Map<String, List<String>> headers) {
        @Override
        public boolean equals(Object other) {
            return other instanceof Answer that && status == that.status && body.equals(that.body);
        }

        @Override
        public int hashCode() {
            return 31 * status + body.hashCode();
        }

        @Override
        public String toString() {
            return status + " " + body.strip();
        }
    }

    private record Stats(long batches, long events, long duplicates) {
    }

    private String dataUrl() {
        return postgres.url(schema);
    }

    private McpdConfig config(int port) {
        return McpdConfig.fromEnvironment(Map.of("MCPD_LISTEN", "127.0.0.1:" + port, "MCPD_DATA", dataUrl()));
    }

    private URI startCollector() {
        int port = Ports.free();
        collectors.add(CollectorApplication.start(config(port)));
        return uri(port);
    }

    private static URI uri(int port) {
        return URI.create("http://127.0.0.1:" + port);
    }

    private Connection connect() throws SQLException {
        return postgres.connect(schema);
    }

    private List<String> tables(Connection connection) throws SQLException {
        return strings(connection, "SELECT table_name FROM information_schema.tables WHERE table_schema = '"
                + schema + "' ORDER BY table_name");
    }

    private static List<String> strings(Connection connection, String sql) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                values.add(rs.getString(1));
            }
        }
        return values;
    }

    private static Answer post(URI collector, String json, Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(collector.resolve("/v1/ingest")).timeout(REQUEST_TIMEOUT)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        headers.forEach(request::header);
        return send(request);
    }

    private static Answer get(URI collector, String path) {
        return send(HttpRequest.newBuilder(collector.resolve(path)).timeout(REQUEST_TIMEOUT).GET());
    }

    private static Answer send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> answer = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(answer.statusCode(), answer.body(), answer.headers().map());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Stats stats(URI collector) {
        Answer answer = get(collector, "/v1/stats");
        assertEquals(200, answer.status(), answer::toString);
        try {
            JsonNode node = JSON.readTree(answer.body());
            assertEquals(4, node.size(), answer::toString);
            return new Stats(node.get("batches").longValue(), node.get("events").longValue(),
                    node.get("duplicates").longValue());
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + answer, e);
        }
    }

    private static void assertAnswer(int status, String body, Answer actual) {
        assertAnswer(status, body, actual, "");
    }

    private static void assertAnswer(int status, String body, Answer actual, String why) {
        assertEquals(status + " " + body, actual.status() + " " + actual.body(), why);
    }

}
