package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.PROCESS_PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.relay.TestUpstream;
import dev.mcpd.spool.SpoolReader;
import dev.mcpd.testing.TestTuning;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * "A delivered request leaves the spool only after the upstream answered 2xx." The packaged relay is
 * killed with SIGKILL while a full window of requests is in flight to a slow upstream; after a restart every
 * acknowledged request reaches the upstream — some twice (the crash fell between the upstream's answer and the
 * spool's acknowledgement), each copy with the same idempotency key, which is what lets a collector count it once.
 */
class DeliveryCrashIT {

    static final int REQUESTS = 300;
    /** The window a relay starts with: this many requests are in flight when the relay is killed. */
    static final int FULL_WINDOW = 16;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedRequestIsDeliveredAfterAKill9WithAFullWindowInFlight() throws Exception {
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        try (TestUpstream upstream = TestUpstream.start()
                .answer(r -> TestUpstream.Answer.ok().after(Duration.ofMillis(200)))) {
            int port = PackagedJar.freePort();
            String[] args = {"relay", "--listen", "127.0.0.1:" + port, "--data", dir.resolve("mcpd.db").toString(),
                "--upstream", upstream.url().toString()};
            HttpClient http = TestTuning.HTTP;
            try (PackagedJar relay = PackagedJar.start(dir, port, Map.of(), args)) {
                ExecutorService senders = Executors.newFixedThreadPool(8);
                for (int i = 0; i < REQUESTS; i++) {
                    String key = "crash-during-delivery-" + i;
                    senders.execute(() -> {
                        try {
                            HttpResponse<Void> answer = http.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                                    .header("Idempotency-Key", key).header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"k\":\"" + key + "\"}]}"))
                                    .build(), HttpResponse.BodyHandlers.discarding());
                            if (answer.statusCode() / 100 == 2) {
                                acknowledged.add(key);
                            }
                        } catch (Exception e) {
                            // the relay was killed: not acknowledged
                        }
                    });
                }
                await("a third delivered and a full window in flight").atMost(PROCESS_PATIENCE)
                        .until(() -> upstream.received().size() >= REQUESTS / 3 && inFlight(relay) >= FULL_WINDOW);
                relay.kill9();
                senders.shutdown();
                assertTrue(senders.awaitTermination(60, TimeUnit.SECONDS));
            }
            int receivedBeforeRestart = upstream.received().size();
            try (PackagedJar relay = PackagedJar.start(dir, port, Map.of(), args)) {
                await().atMost(PROCESS_PATIENCE).until(() -> keysReceived(upstream).containsAll(acknowledged));
                await().atMost(PROCESS_PATIENCE).until(() -> SpoolReader.read(spoolDir()).entries().isEmpty());
                relay.terminate();
            }
            List<String> keys = upstream.received().stream().map(r -> r.header("Idempotency-Key")).toList();
            Set<String> distinct = new HashSet<>(keys);
            assertTrue(distinct.containsAll(acknowledged), "every acknowledged request arrived");
            assertTrue(distinct.stream().allMatch(k -> k.startsWith("crash-during-delivery-")), "nothing invented");
            for (TestUpstream.Received copy : upstream.received()) {
                String key = copy.header("Idempotency-Key");
                assertEquals("{\"events\":[{\"k\":\"" + key + "\"}]}", new String(copy.body(), StandardCharsets.UTF_8),
                        "a copy carries its own bytes under its own key");
            }
            System.out.printf("delivery crash: %d acknowledged, %d received before the kill, %d copies in all, "
                    + "%d distinct, %d sent twice%n", acknowledged.size(), receivedBeforeRestart, keys.size(),
                    distinct.size(), keys.size() - distinct.size());
        }
    }

    private static int inFlight(PackagedJar relay) throws InterruptedException {
        try {
            HttpResponse<String> status = TestTuning.HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(status.body()).path("upstreams").path(0).path("inFlight").asInt();
        } catch (IOException e) {
            return -1; // not answering: ask again
        }
    }

    private Path spoolDir() {
        return dir.resolve("mcpd.spool").resolve("relay");
    }

    private static Set<String> keysReceived(TestUpstream upstream) {
        return upstream.received().stream().map(r -> r.header("Idempotency-Key")).collect(Collectors.toSet());
    }
}
