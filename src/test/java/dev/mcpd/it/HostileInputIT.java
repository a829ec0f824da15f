package dev.mcpd.it;

import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.relay.TestUpstream;
import dev.mcpd.testing.GzipBomb;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, defects 4, 5 and the stop during start-up, on the packaged jar with a small heap, as a container with a
 * memory limit runs it: large bodies in flight and gzip bombs are answered, never an {@code OutOfMemoryError} or a
 * 408; a SIGTERM while the relay starts closes the door at once and ends the process promptly.
 */
class HostileInputIT {


    @TempDir
    Path dir;

    private static String outcome(HttpResponse<?> answer) {
        return answer.statusCode() + answer.headers().firstValue("Retry-After").map(s -> "+Retry-After:" + s)
                .orElse("");
    }

    private static String rssPeak(PackagedJar process) throws IOException {
        return Files.readAllLines(Path.of("/proc/" + process.pid() + "/status")).stream()
                .filter(line -> line.startsWith("VmHWM:")).map(line -> line.substring(6).strip()).findFirst()
                .orElse("?");
    }

    @Test
    void twentyFourConcurrentSixteenMegabyteUploadsIntoA256MiBHeapAreTakenOrRefusedWithRetryAfter() throws Exception {
        int port = PackagedJar.freePort();
        try (TestUpstream upstream = TestUpstream.start();
             PackagedJar relay = PackagedJar.start(dir, port, Map.of("MCPD_LISTEN", "127.0.0.1:" + port,
                     "MCPD_DATA", dir.resolve("mcpd.db").toString(), "MCPD_UPSTREAMS", upstream.url().toString()),
                     List.of("-Xmx256m"), "relay")) {
            byte[] body = new byte[16_000_000];
            Arrays.fill(body, (byte) 'x');
            ExecutorService senders = Executors.newFixedThreadPool(24);
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                answers.add(senders.submit(() -> {
                    try {
                        return outcome(HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                                .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/octet-stream")
                                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                                HttpResponse.BodyHandlers.discarding()));
                    } catch (IOException e) {
                        return "no answer: " + e;
                    }
                }));
            }
            Map<String, Integer> counts = new TreeMap<>();
            for (Future<String> answer : answers) {
                counts.merge(answer.get(), 1, Integer::sum);
            }
            senders.shutdown();
            String log = Files.readString(relay.log(), StandardCharsets.UTF_8);
            boolean onlyTakenOrRetry = counts.keySet().stream().allMatch(a -> a.equals("202")
                    || a.equals("503+Retry-After:5"));
            HttpResponse<String> small = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{}]}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertHostile("m1", "24 concurrent POSTs of 16 MB each into a relay with -Xmx256m (bodies within"
                            + " --max-body-bytes 16 MiB)",
                    "202 for the first to arrive, 503 + Retry-After: 5 for the rest (never 408, never none taken); no"
                            + " OutOfMemoryError; the relay healthy after",
                    counts + "; " + (log.contains("OutOfMemoryError") ? "OutOfMemoryError in the log" : "no"
                            + " OutOfMemoryError") + "; a small POST after: " + small.statusCode() + "; peak RSS "
                            + rssPeak(relay),
                    onlyTakenOrRetry && counts.containsKey("202") && !log.contains("OutOfMemoryError")
                            && small.statusCode() == 202 && relay.isAlive());
        }
    }

    @Test
    void concurrentGzipBombsIntoACollectorWithASmallHeapAreRefused413() throws Exception {
        int port = PackagedJar.freePort();
        try (PackagedJar collector = PackagedJar.start(dir, port, Map.of("MCPD_LISTEN", "127.0.0.1:" + port,
                "MCPD_DATA", dir.resolve("mcpd.db").toString()), List.of("-Xmx128m"), "serve")) {
            byte[] bomb = GzipBomb.ofEmptyObjects(64L << 20);
            ExecutorService senders = Executors.newFixedThreadPool(8);
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                answers.add(senders.submit(() -> outcome(HTTP.send(HttpRequest.newBuilder(collector.uri("/v1/ingest"))
                        .header("Content-Type", "application/json").header("Content-Encoding", "gzip")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(bomb)).build(),
                        HttpResponse.BodyHandlers.discarding()))));
            }
            Map<String, Integer> counts = new TreeMap<>();
            for (Future<String> answer : answers) {
                counts.merge(answer.get(), 1, Integer::sum);
            }
            senders.shutdown();
            String log = Files.readString(collector.log(), StandardCharsets.UTF_8);
            int ready = HTTP.send(HttpRequest.newBuilder(collector.uri("/readyz")).GET().build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
            assertHostile("m2", "8 concurrent " + (bomb.length >> 10) + " KiB gzip batches, each inflating to 64 MiB"
                            + " of {}, into a collector with -Xmx128m",
                    "413 each; no OutOfMemoryError; the collector ready after",
                    counts + "; " + (log.contains("OutOfMemoryError") ? "OutOfMemoryError in the log" : "no"
                            + " OutOfMemoryError") + "; /readyz " + ready + "; peak RSS " + rssPeak(collector),
                    counts.equals(Map.of("413", 8)) && !log.contains("OutOfMemoryError") && ready == 200);
        }
    }

    @Test
    void aSigtermWhileTheRelayStartsClosesTheDoorAtOnceAndEndsTheProcessPromptly() throws Exception {
        int port = PackagedJar.freePort();
        PackagedJar relay = PackagedJar.launch(dir, port, Map.of("MCPD_LISTEN", "127.0.0.1:" + port,
                "MCPD_DATA", dir.resolve("mcpd.db").toString(), "MCPD_UPSTREAMS", "http://127.0.0.1:9"), List.of(),
                "relay");
        try (relay) {
            // Camel Main installs its SIGTERM hook as it starts initialising: from that line on, a SIGTERM is "during
            // start-up" — before the routes are up, seconds before the relay would first serve.
            Awaitility.await().atMost(PackagedJar.START_DEADLINE).pollInterval(Duration.ofMillis(10))
                    .until(() -> !relay.isAlive() || Files.readString(relay.log()).contains("is starting"));
            AtomicBoolean exited = new AtomicBoolean();
            Map<String, Integer> after = new ConcurrentHashMap<>();
            Thread poller = new Thread(() -> {
                HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofMillis(500)).build();
                while (!exited.get()) {
                    for (HttpRequest request : List.of(
                            HttpRequest.newBuilder(relay.uri("/v1/ingest")).timeout(Duration.ofSeconds(2))
                                    .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{}]}")).build(),
                            HttpRequest.newBuilder(relay.uri("/readyz")).timeout(Duration.ofSeconds(2)).GET()
                                    .build())) {
                        try {
                            String what = request.method() + " " + request.uri().getPath() + " "
                                    + outcome(client.send(request, HttpResponse.BodyHandlers.discarding()));
                            after.merge(what, 1, Integer::sum);
                        } catch (IOException refused) {
                            after.merge(request.method() + " " + request.uri().getPath() + " no answer", 1,
                                    Integer::sum);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            });
            long signalled = System.nanoTime();
            relay.signalTerminate();
            poller.start();
            int status = relay.awaitExit();
            double seconds = (System.nanoTime() - signalled) / 1e9;
            exited.set(true);
            poller.join();
            boolean closedDoor = after.keySet().stream().allMatch(what -> what.endsWith("no answer")
                    || what.startsWith("POST /v1/ingest 503+Retry-After:5") || what.startsWith("GET /readyz 503"));
            assertHostile("q1", "SIGTERM while the relay starts (as Camel begins initialising), a sender and a"
                            + " probe asking meanwhile",
                    "from the signal on, ingest 503 + Retry-After: 5 and /readyz 503 (or no answer); exit 143"
                            + " promptly",
                    "answers after the signal " + new TreeMap<>(after) + "; exit " + status + " after "
                            + String.format("%.1f", seconds) + " s",
                    closedDoor && status == 143 && seconds < 15);
            assertEquals(143, status);
        }
    }
}
