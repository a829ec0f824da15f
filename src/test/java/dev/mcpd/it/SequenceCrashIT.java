package dev.mcpd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delivery barrier across a crash: the packaged relay, its upstream down, hands out sequence numbers while callers wait on
 * {@code /relay/sync}; it is killed with SIGKILL, and after the restart on the same spool its id is the same and
 * every new sequence number lies above every one handed out before — whether or not the entries were still there.
 */
class SequenceCrashIT {

    @TempDir
    Path tmp;

    record Accepted(long seq, String relay) {
    }

    static Accepted post(HttpClient client, PackagedJar relay) throws Exception {
        HttpResponse<String> answer = client.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"id\":\"" + UUID.randomUUID() + "\"}]}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), answer.body());
        return new Accepted(Long.parseLong(answer.headers().firstValue("mcpd-relay-seq").orElseThrow()),
                answer.headers().firstValue("mcpd-relay-id").orElseThrow());
    }

    @Test
    void afterAKill9WithCallersWaitingTheIdStaysAndSequencesGoOnAboveEveryOneHandedOut() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        int port = PackagedJar.freePort();
        String[] args = {"relay", "--listen", "127.0.0.1:" + port, "--data", data.resolve("mcpd.db").toString(),
                "--upstream", "http://127.0.0.1:9"};
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        List<Accepted> before = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
        try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), args)) {
            for (int i = 0; i < 50; i++) {
                before.add(post(client, relay));
            }
            long last = before.get(before.size() - 1).seq();
            for (int i = 0; i < 20; i++) {
                waiting.add(client.sendAsync(HttpRequest.newBuilder(relay.uri("/relay/sync?seq=" + last
                        + "&timeout=60s")).build(), HttpResponse.BodyHandlers.ofString()));
            }
            awaitWaiters(client, relay, 20);
            relay.kill9();
        }
        for (CompletableFuture<HttpResponse<String>> waiter : waiting) {
            assertTrue(waiter.handle((answer, failure) -> failure != null).get(30, TimeUnit.SECONDS),
                    "a waiter's connection ends with the process, unanswered");
        }
        long highest = before.stream().mapToLong(Accepted::seq).max().orElseThrow();

        try (PackagedJar restarted = PackagedJar.start(tmp, port, Map.of(), args)) {
            Accepted after = post(client, restarted);
            assertEquals(before.get(0).relay(), after.relay(), "the same spool, the same id");
            assertTrue(after.seq() > highest, after.seq() + " above " + highest);
            HttpResponse<String> sync = client.send(HttpRequest.newBuilder(restarted.uri("/relay/sync?seq="
                    + highest + "&timeout=100ms")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(504, sync.statusCode(), "the 50 entries survived and still wait: " + sync.body());
            assertEquals(50, new ObjectMapper().readTree(sync.body()).get("pending")
                    .asInt(), sync.body());
        }
    }

    private static void awaitWaiters(HttpClient client, PackagedJar relay, int count) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            String status = client.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            if (new ObjectMapper().readTree(status).path("sync").path("waiters")
                    .asInt() == count) {
                return;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("the " + count + " callers never showed as waiting in /relay/status");
    }
}
