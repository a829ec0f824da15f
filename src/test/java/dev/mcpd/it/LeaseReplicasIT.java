package dev.mcpd.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.collector.TestPostgres;
import dev.mcpd.testing.TestTuning;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Collector replicas (the packaged jar, separate processes) on one PostgreSQL take turns through the store's lease:
 * never two holders at once, a takeover within three passes after {@code kill -9} of the holder and within one after
 * the release its SIGTERM brings, and a holder paused (SIGSTOP) past its lease that resumes (SIGCONT) deletes nothing.
 */
class LeaseReplicasIT {

    private static final Duration PASS = Duration.ofSeconds(1);
    /** What a JVM's timer and the store's statements add to a takeover's time on a loaded machine. */
    private static final Duration SLACK = Duration.ofMillis(700);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void replicasTakeTurnsNeverTwoAtOnceAndAResumedFormerHolderDeletesNothing() throws Exception {
        TestPostgres postgres = TestPostgres.require();
        String schema = postgres.createSchema("mcpd_lease_");
        String data = postgres.url(schema);
        List<PackagedJar> replicas = new CopyOnWriteArrayList<>();
        List<String> doubleHolders = new CopyOnWriteArrayList<>();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            // The replicas are asked one after another: a hand-over between two answers looks like two holders for
            // one round. Two holders that are real hold for a pass at least, so they are seen in two rounds running.
            List<String> lastRound = List.of();
            while (watching.get()) {
                List<String> holders = new ArrayList<>();
                for (PackagedJar replica : replicas) {
                    status(replica).filter(s -> s.path("lease").path("held").asBoolean())
                            .ifPresent(s -> holders.add(s.path("replica").asText()));
                }
                if (holders.size() > 1 && holders.equals(lastRound)) {
                    doubleHolders.add(holders.toString());
                }
                lastRound = holders;
                try {
                    TimeUnit.MILLISECONDS.sleep(100); // the watcher's own pace, not synchronisation
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "lease-watcher");
        try {
            PackagedJar a = started(replicas, start(data, Map.of()));
            awaitHolder(a, Duration.ofSeconds(20));
            watcher.start();
            PackagedJar b = started(replicas, start(data, Map.of()));
            awaitStatus(b, s -> !s.path("lease").path("held").asBoolean()
                    && s.path("lease").path("holder").asText().equals(id(a)), "B sees A hold the lease");

            long killedAt = System.currentTimeMillis();
            a.kill9();
            replicas.remove(a);
            awaitHolder(b, TestTuning.PROCESS_PATIENCE);
            long afterKill = since(b) - killedAt;
            System.out.println("takeover after kill -9 of the holder: " + afterKill + " ms");
            assertTrue(afterKill <= PASS.multipliedBy(3).plus(SLACK).toMillis(), "within three passes: "
                    + afterKill + " ms");

            // C forgets keys after a minute; D, which takes over from it, keeps them a week.
            PackagedJar c = started(replicas, start(data, Map.of("MCPD_DEDUP_WINDOW", "1m")));
            awaitStatus(c, s -> s.path("lease").path("holder").asText().equals(id(b)), "C sees B hold the lease");
            long signalledAt = System.currentTimeMillis();
            b.signalTerminate();
            awaitHolder(c, TestTuning.PROCESS_PATIENCE);
            assertEquals(143, b.awaitExit());
            replicas.remove(b);
            long releasedAt = releasedAt(b);
            long afterRelease = since(c) - releasedAt;
            System.out.println("takeover after SIGTERM of the holder: released " + (releasedAt - signalledAt)
                    + " ms after the signal, taken " + afterRelease + " ms after the release");
            assertTrue(afterRelease <= PASS.plus(SLACK).toMillis(), "within one pass of the release: " + afterRelease
                    + " ms");

            PackagedJar d = started(replicas, start(data, Map.of()));
            awaitStatus(d, s -> s.path("lease").path("holder").asText().equals(id(c)), "D sees C hold the lease");
            signal("STOP", c);
            replicas.remove(c); // a stopped process answers nothing: the watcher would only wait for it
            awaitHolder(d, PASS.multipliedBy(3).plus(SLACK).plusSeconds(3));
            long hourAgo = System.currentTimeMillis() - Duration.ofHours(1).toMillis();
            postgres.execute(schema, "INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256,"
                    + " seen_at_ms) VALUES ('', 'an-hour-old-1', NULL, " + hourAgo + "), ('', 'an-hour-old-2', NULL, "
                    + hourAgo + ")");
            long resumed = System.currentTimeMillis();
            signal("CONT", c);
            replicas.add(c);
            await("the resumed replica notices it lost the lease").atMost(Duration.ofSeconds(20))
                    .until(() -> Files.readString(c.log()).contains("lease lost"));
            awaitStatus(d, s -> s.path("lastSweep").path("at").isTextual()
                    && Instant.parse(s.path("lastSweep").path("at").asText()).toEpochMilli()
                    > resumed + PASS.multipliedBy(3).toMillis(), "three passes after the resume");
            assertEquals(2, countOldKeys(postgres, schema), "the resumed replica, whose window is a minute, deleted"
                    + " nothing after it lost the lease; log:\n" + c.logTail(30));
            assertEquals(List.of(), doubleHolders, "never two holders at once");
        } finally {
            watching.set(false);
            watcher.interrupt();
            for (PackagedJar replica : replicas) {
                replica.close();
            }
            postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    private PackagedJar start(String data, Map<String, String> environment) {
        int port = PackagedJar.freePort();
        return PackagedJar.start(dir, port, environment, "serve", "--listen", "127.0.0.1:" + port, "--data", data,
                "--lease-pass-seconds", Long.toString(PASS.toSeconds()));
    }

    private static PackagedJar started(List<PackagedJar> replicas, PackagedJar replica) {
        replicas.add(replica);
        return replica;
    }

    private static String id(PackagedJar replica) {
        return status(replica).orElseThrow().path("replica").asText();
    }

    /** Waits until the replica holds the lease. */
    private static void awaitHolder(PackagedJar replica, Duration atMost) {
        await("replica on port " + replica.port() + " holds the lease").atMost(atMost)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> status(replica).map(s -> s.path("lease").path("held").asBoolean()).orElse(false));
    }

    /**
     * When the replica took the lease, by the store's clock (PostgreSQL on this machine: the clock the test and the
     * replicas' logs read too). Takeovers are timed by it rather than by polling the status pages, whose answers a
     * loaded machine delays.
     */
    private static long since(PackagedJar holder) {
        return Instant.parse(status(holder).orElseThrow().path("lease").path("since").asText())
                .toEpochMilli();
    }

    /** When the stopped replica gave the lease up: the time of its log line (the clock of this machine). */
    private static long releasedAt(PackagedJar stopped) throws IOException {
        String line = Files.readAllLines(stopped.log()).stream().filter(l -> l.contains("lease released"))
                .findFirst().orElseThrow(() -> new AssertionError("no 'lease released' line:\n" + stopped.logTail(20)));
        return Instant.parse(line.substring(0, line.indexOf(' '))).toEpochMilli();
    }

    private static void awaitStatus(PackagedJar replica, Predicate<JsonNode> condition,
                                    String what) {
        await(what).atMost(Duration.ofSeconds(20)).until(() -> status(replica).map(condition::test).orElse(false));
    }

    private static Optional<JsonNode> status(PackagedJar replica) {
        try {
            HttpResponse<String> answer = TestTuning.HTTP.send(HttpRequest.newBuilder(replica.uri("/collector/status"))
                    .timeout(Duration.ofMillis(500)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() == 200 ? Optional.of(JSON.readTree(answer.body())) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private static void signal(String signal, PackagedJar replica) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(replica.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + signal);
    }

    private static long countOldKeys(TestPostgres postgres, String schema) throws Exception {
        try (Connection connection = postgres.connect(schema); Statement statement = connection.createStatement();
             ResultSet rs = statement.executeQuery("SELECT count(*) FROM idempotency_keys WHERE idempotency_key LIKE"
                     + " 'an-hour-old-%'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
