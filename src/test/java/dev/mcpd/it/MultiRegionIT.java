package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PROCESS_PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.collector.TestPostgres;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 5 end to end, with the packaged jar as separate processes: two collectors ({@code serve})
 * on one PostgreSQL, a relay whose {@code --upstream} names collector 1 then collector 2. Eight senders post 2 000
 * one-event requests — keyed by header, keyed in the body, or unkeyed (the relay derives the key) — while collector 1
 * is killed with SIGKILL and started again (requests 1 000–1 499 flow while it restarts; the last 500 are sent once
 * it is back, so the relay can return traffic to it). Once the relay's spool is empty, the shared store holds every
 * acknowledged event exactly once: copies the relay re-sent after the kill are recognised as duplicates.
 *
 * <p>The collectors archive in a schema of their own ({@code ?currentSchema=…}), created empty for the run and dropped
 * after it (the test role may not create databases).
 */
@Timeout(value = 170, unit = TimeUnit.SECONDS)
class MultiRegionIT {

    static final int REQUESTS = 2_000;
    static final int SENDERS = 8;
    static final int KILL_AFTER_ACKNOWLEDGED = 500;
    static final int RESTART_AFTER_ACKNOWLEDGED = 1_000;
    /** Requests from this one on wait until collector 1 is back, so that some traffic follows its return. */
    static final int HELD_UNTIL_RESTARTED = 1_500;

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void everyEventAcknowledgedByTheRelayIsArchivedOnceWhileThePrimaryCollectorIsKilledAndRestarted()
            throws Exception {
        TestPostgres postgres = TestPostgres.require();
        String schema = postgres.createSchema("mcpd_it_");
        List<PackagedJar> processes = new ArrayList<>();
        List<ExecutorService> senderPools = new ArrayList<>();
        try {
            String data = postgres.url(schema);
            int port1 = PackagedJar.freePort();
            int port2 = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            String[] collector1Args = {"serve", "--listen", "127.0.0.1:" + port1, "--data", data};
            PackagedJar collector1 = started(processes, PackagedJar.start(dir, port1, Map.of(), collector1Args));
            PackagedJar collector2 = started(processes, PackagedJar.start(dir, port2, Map.of(),
                    "serve", "--listen", "127.0.0.1:" + port2, "--data", data));
            PackagedJar relay = started(processes, PackagedJar.start(dir, relayPort, Map.of(),
                    "relay", "--listen", "127.0.0.1:" + relayPort, "--data", dir.resolve("relay.db").toString(),
                    "--upstream", "http://127.0.0.1:" + port1, "--upstream", "http://127.0.0.1:" + port2));

            // ---- eight senders, 2 000 one-event requests, each event distinct
            Set<Integer> acknowledged = ConcurrentHashMap.newKeySet();
            Map<Integer, String> refused = new ConcurrentHashMap<>();
            AtomicInteger next = new AtomicInteger();
            CountDownLatch collector1Back = new CountDownLatch(1);
            ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
            senderPools.add(senders);
            for (int s = 0; s < SENDERS; s++) {
                senders.execute(() -> {
                    for (int i = next.getAndIncrement(); i < REQUESTS; i = next.getAndIncrement()) {
                        if (i >= HELD_UNTIL_RESTARTED && !awaitQuietly(collector1Back)) {
                            refused.put(i, "not sent: collector 1 never came back");
                            continue;
                        }
                        String outcome = send(relay, schema, i);
                        if (outcome == null) {
                            acknowledged.add(i);
                        } else {
                            refused.put(i, outcome);
                        }
                    }
                });
            }
            senders.shutdown();

            // ---- collector 1 killed after ~500 acknowledged, started again after ~1 000
            await("~" + KILL_AFTER_ACKNOWLEDGED + " acknowledged").atMost(PROCESS_PATIENCE).pollInterval(Duration.ofMillis(2))
                    .until(() -> acknowledged.size() + refused.size() >= KILL_AFTER_ACKNOWLEDGED);
            int killedAt = acknowledged.size();
            collector1.kill9();
            processes.remove(collector1);
            await("~" + RESTART_AFTER_ACKNOWLEDGED + " acknowledged").atMost(PROCESS_PATIENCE)
                    .pollInterval(Duration.ofMillis(2))
                    .until(() -> acknowledged.size() + refused.size() >= RESTART_AFTER_ACKNOWLEDGED);
            int restartedAt = acknowledged.size();
            collector1 = started(processes, PackagedJar.start(dir, port1, Map.of(), collector1Args));
            int upAgainAt = acknowledged.size();
            long deliveredTo1BeforeReturn = json(relay, "/relay/status").path("upstreams").path(0).path("delivered")
                    .asLong(-1);
            collector1Back.countDown();

            assertTrue(senders.awaitTermination(PROCESS_PATIENCE.toSeconds(), TimeUnit.SECONDS), "the senders finish");
            assertEquals(Map.of(), new TreeMap<>(refused), "the relay acknowledges every request");
            assertEquals(REQUESTS, acknowledged.size());

            // ---- the relay delivers everything
            JsonNode[] status = new JsonNode[1];
            await("the relay's spool is empty").atMost(PROCESS_PATIENCE).pollInterval(Duration.ofMillis(100))
                    .until(() -> (status[0] = json(relay, "/relay/status")).path("spool").path("entries").asLong(-1)
                            == 0);
            JsonNode spool = status[0].path("spool");
            assertEquals(0, spool.path("deadLetters").asLong(-1), () -> "nothing dead-lettered: " + status[0]);
            assertEquals(REQUESTS, spool.path("accepted").asLong(-1), () -> "the relay counted: " + status[0]);

            // ---- what the shared store holds, seen from either collector and from PostgreSQL itself
            JsonNode stats1 = json(collector1, "/v1/stats");
            JsonNode stats2 = json(collector2, "/v1/stats");
            assertEquals(stats1, stats2, "both collectors report the one shared store");
            long events = stats2.path("events").asLong(-1);
            long batches = stats2.path("batches").asLong(-1);
            long duplicates = stats2.path("duplicates").asLong(-1);
            assertEquals(acknowledged.size(), events, () -> "events archived == requests acknowledged: " + stats2);
            assertEquals(events, batches, () -> "one event per request, one batch per request: " + stats2);

            Set<Integer> archived = new TreeSet<>();
            try (Connection connection = postgres.connect(schema); Statement statement = connection.createStatement()) {
                try (ResultSet rs = statement.executeQuery("SELECT count(*), count(DISTINCT body),"
                        + " count(idempotency_key), count(DISTINCT idempotency_key) FROM batches")) {
                    rs.next();
                    assertEquals(batches, rs.getLong(1), "the rows behind /v1/stats");
                    assertEquals(rs.getLong(1), rs.getLong(2), "no body is stored twice");
                    assertEquals(rs.getLong(1), rs.getLong(3), "through a relay every request carries a key");
                    assertEquals(rs.getLong(1), rs.getLong(4), "no key is stored twice");
                }
                try (ResultSet rs = statement.executeQuery("SELECT convert_from(body, 'UTF8') FROM batches")) {
                    while (rs.next()) {
                        JsonNode event = JSON.readTree(rs.getString(1)).path("events").path(0);
                        assertEquals(schema, event.path("run").asText(), "only this run's events");
                        assertTrue(archived.add(event.path("seq").asInt(-1)), "each event once");
                    }
                }
            }
            Set<Integer> lost = new TreeSet<>(acknowledged);
            lost.removeAll(archived);
            assertEquals(Set.of(), lost, "every acknowledged event is archived");
            assertEquals(new TreeSet<>(acknowledged), archived, "and nothing else");

            JsonNode upstreams = status[0].path("upstreams");
            System.out.printf("multi-region: sent %d, acked %d, archived %d events in %d batches, duplicates "
                            + "recognised %d, lost %d; collector 1 killed at %d acked, restarted at %d (up again at "
                            + "%d); relay delivered %d to collector 1 (%d of them after its return) and %d to collector 2,"
                            + " failed attempts %d/%d; at the end collector 1 is %s%n",
                    REQUESTS, acknowledged.size(), events, batches, duplicates, lost.size(), killedAt, restartedAt,
                    upAgainAt, upstreams.path(0).path("delivered").asLong(),
                    upstreams.path(0).path("delivered").asLong() - deliveredTo1BeforeReturn,
                    upstreams.path(1).path("delivered").asLong(), upstreams.path(0).path("failedAttempts").asLong(),
                    upstreams.path(1).path("failedAttempts").asLong(), upstreams.path(0).path("state").asText()
                            + (upstreams.path(0).has("waitingUntil")
                                    ? " until " + upstreams.path(0).path("waitingUntil").asText() : "") + " after "
                            + upstreams.path(0).path("consecutiveFailures").asLong() + " failures in a row (now "
                            + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ")");
        } finally {
            senderPools.forEach(ExecutorService::shutdownNow);
            for (PackagedJar process : processes) {
                process.close();
            }
            postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    private static boolean awaitQuietly(CountDownLatch latch) {
        try {
            return latch.await(PROCESS_PATIENCE.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static PackagedJar started(List<PackagedJar> processes, PackagedJar process) {
        processes.add(process);
        return process;
    }

    /**
     * Request {@code i}: one distinct event; keyed by an {@code Idempotency-Key} header (i % 3 == 0), by the body's
     * {@code idempotency_key} (i % 3 == 1), or not at all (the relay derives one). Null when the relay answered 2xx,
     * else what went wrong.
     */
    private static String send(PackagedJar relay, String run, int i) {
        String event = "{\"region\":\"eu\",\"run\":\"" + run + "\",\"seq\":" + i + "}";
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri("/v1/ingest")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json");
        String body;
        switch (i % 3) {
            case 0 -> {
                request.header("Idempotency-Key", run + "-header-" + i);
                body = "{\"events\":[" + event + "]}";
            }
            case 1 -> body = "{\"idempotency_key\":\"" + run + "-body-" + i + "\",\"events\":[" + event + "]}";
            default -> body = "{\"events\":[" + event + "]}";
        }
        try {
            HttpResponse<String> answer = HTTP.send(request.POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() / 100 == 2 ? null : answer.statusCode() + " " + answer.body().strip()
                    + answer.headers().firstValue("Retry-After").map(s -> " (Retry-After " + s + ")").orElse("");
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e.toString();
        }
    }

    private static JsonNode json(PackagedJar process, String path) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(process.uri(path))
                .timeout(Duration.ofSeconds(15)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), () -> path + ": " + answer.body());
        return JSON.readTree(answer.body());
    }
}
