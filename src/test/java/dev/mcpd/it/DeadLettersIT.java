package dev.mcpd.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.relay.TestUpstream;
import dev.mcpd.relay.TestUpstream.Answer;
import dev.mcpd.testing.OtlpTelemetry;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dead letters through the packaged jar: the dead-letter commands beside a running relay, replay into it without a
 * restart (original key and credential), crashes of the CLI and of the relay in the middle of a replay, a 4xx the
 * operator made retryable, and entries that expire.
 */
class DeadLettersIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration SOON = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private String[] relayArgs(int port, TestUpstream upstream, String... more) {
        List<String> args = new ArrayList<>(List.of("relay", "--listen", "127.0.0.1:" + port, "--spool-dir",
                tmp.resolve("spool").toString(), "--upstream", upstream.url().toString()));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    private PackagedJar.Result dead(String... args) {
        List<String> all = new ArrayList<>(List.of("relay", "dead"));
        all.addAll(List.of(args));
        all.addAll(List.of("--spool-dir", tmp.resolve("spool").toString()));
        return PackagedJar.runJar(tmp, Map.of(), all.toArray(String[]::new));
    }

    private HttpResponse<String> post(PackagedJar relay, String key, String contentType, byte[] body,
                                      String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .header("Content-Type", contentType).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        HttpResponse<String> answer = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), answer.body());
        return answer;
    }

    private JsonNode status(PackagedJar relay) throws Exception {
        return JSON.readTree(client.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    private long deadCount(PackagedJar relay) throws Exception {
        return status(relay).path("deadLetters").path("count").asLong();
    }

    /** An upstream behaviour that takes every request and remembers the keys it took. */
    private static Function<TestUpstream.Received, Answer> taking(Set<String> took) {
        return r -> {
            took.add(r.header("Idempotency-Key"));
            return Answer.ok();
        };
    }

    /** The dead letters in the relay's dead/ as the CLI leaves it: one {@code .entry} file each. */
    private long deadEntryFiles() throws IOException {
        try (Stream<Path> files = Files.list(tmp.resolve("spool").resolve("relay").resolve("dead"))) {
            return files.filter(f -> f.getFileName().toString().matches("\\d+\\.entry")).count();
        }
    }

    private List<JsonNode> listJson() throws IOException {
        PackagedJar.Result list = dead("list", "--json");
        assertEquals(0, list.status(), list.toString());
        List<JsonNode> letters = new ArrayList<>();
        for (String line : list.outLines()) {
            letters.add(JSON.readTree(line));
        }
        return letters;
    }

    @Test
    void anOperatorSeesWhyReplaysIntoTheRunningRelayWithKeyAndCredentialAndPurges() throws Exception {
        byte[] binary = new byte[300];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) (i * 7);
        }
        try (TestUpstream upstream = TestUpstream.start()
                .answer(r -> Answer.status(400).withBody("tenant unknown\nsecond line"))) {
            int port = PackagedJar.freePort();
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), relayArgs(port, upstream))) {
                post(relay, "key-json", "application/json", "{\"events\":[{\"n\":1}]}".getBytes(), "Bearer sender-1");
                post(relay, "key-binary", "application/x-protobuf", binary, null);
                post(relay, "key-third", "application/json", "{\"events\":[]}".getBytes(), null);
                await().atMost(SOON).until(() -> deadCount(relay) == 3);
                JsonNode deadStatus = status(relay).get("deadLetters");
                assertTrue(deadStatus.get("bytes").asLong() > binary.length, deadStatus.toString());
                assertFalse(deadStatus.get("oldestKeptAt").isNull(), deadStatus.toString());

                PackagedJar.Result list = dead("list");
                assertEquals(0, list.status(), list.toString());
                assertEquals(4, list.outLines().size(), list.out());
                assertTrue(list.outLines().get(1).contains("400") && list.outLines().get(1).contains("tenant unknown")
                        && list.outLines().get(1).contains("POST /v1/ingest"), list.out());
                List<JsonNode> letters = listJson();
                assertEquals(List.of("key-json", "key-binary", "key-third"), letters.stream()
                        .map(l -> l.get("idempotencyKey").asText()).toList());
                assertEquals("tenant unknown\nsecond line", letters.get(0).get("answer").asText());
                long binarySeq = letters.get(1).get("seq").asLong();
                Path bodyFile = tmp.resolve("body.bin");
                Process show = new ProcessBuilder(PackagedJar.java().toString(), "-jar", PackagedJar.jar().toString(),
                        "relay", "dead", "show", Long.toString(binarySeq), "--body", "--spool-dir",
                        tmp.resolve("spool").toString()).redirectOutput(bodyFile.toFile())
                        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
                assertTrue(show.waitFor(30, TimeUnit.SECONDS));
                assertEquals(0, show.exitValue());
                assertArrayEquals(binary, Files.readAllBytes(bodyFile), "the stored bytes, unchanged");

                // The cause is fixed: the upstream takes them now.
                Set<String> took = ConcurrentHashMap.newKeySet();
                upstream.answer(taking(took));
                long firstSeq = letters.get(0).get("seq").asLong();
                PackagedJar.Result replay = dead("replay", Long.toString(firstSeq), "999", Long.toString(binarySeq));
                assertEquals(1, replay.status(), replay.toString());
                assertEquals("mcpd: 999 is not in dead/", replay.err().strip());
                assertTrue(replay.out().contains("the running relay took 2 into its spool"), replay.out());
                await().atMost(SOON).until(() -> took.contains("key-binary") && took.contains("key-json")
                        && upstream.received().stream().filter(r -> r.header("Idempotency-Key").equals("key-json"))
                                .anyMatch(r -> "Bearer sender-1".equals(r.header("Authorization"))));
                TestUpstream.Received again = upstream.received().stream()
                        .filter(r -> r.header("Idempotency-Key").equals("key-binary")).reduce((a, b) -> b).orElseThrow();
                assertArrayEquals(binary, again.body());
                assertEquals(1, deadCount(relay), "only the third is left");

                PackagedJar.Result purge = dead("purge", "--all");
                assertEquals(0, purge.status(), purge.toString());
                assertEquals("purged 1 dead letter(s)", purge.out().strip());
                await().atMost(SOON).until(() -> deadCount(relay) == 0);
                // The relay polls its inbox every second: the two may be taken in one pass or in two.
                for (long seq : List.of(firstSeq, binarySeq)) {
                    assertTrue(relay.logTail(200).matches("(?s).*took \\d replayed dead letter\\(s\\) into the spool: "
                            + "[^\\n]*dead " + seq + " as seq \\d+.*"), relay.logTail(40));
                }
                assertFalse(relay.logTail(2000).contains(" ERROR "), "no error on the way: " + relay.logTail(40));
                assertFalse(relay.logTail(2000).contains("\tat "), "no stack trace: " + relay.logTail(40));
            }
        }
    }

    @Test
    void onAStoppedRelaysSpoolTheCommandsWorkAndTheNextStartTakesWhatWasReplayed() throws Exception {
        byte[] gzipped = OtlpTelemetry.gzip("{\"events\":[{\"n\":1}]}".getBytes());
        try (TestUpstream upstream = TestUpstream.start().answer(r -> Answer.status(404).withBody("no such tenant"))) {
            int port = PackagedJar.freePort();
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), relayArgs(port, upstream))) {
                HttpResponse<String> answer = client.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                        .header("Content-Type", "application/json").header("Content-Encoding", "gzip")
                        .header("x-mcpd-key", "sender-key").header("Idempotency-Key", "key-gz")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(gzipped)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(202, answer.statusCode(), answer.body());
                post(relay, "key-plain", "application/json", "{\"events\":[]}".getBytes(), null);
                await().atMost(SOON).until(() -> deadCount(relay) == 2);
                int status = relay.terminate();
                assertTrue(status == 0 || status == 128 + 15, "SIGTERM ends the relay normally, got " + status);
            }
            List<JsonNode> letters = listJson();
            assertEquals("gzip", letters.get(0).get("contentEncoding").asText());
            assertEquals(404, letters.get(0).get("status").asInt());
            PackagedJar.Result show = dead("show", letters.get(0).get("seq").asText());
            assertEquals(0, show.status(), show.toString());
            assertTrue(show.out().contains("answer           no such tenant"), show.out());
            assertFalse(show.out().contains("sender-key"), "never the credential: " + show.out());

            PackagedJar.Result replay = dead("replay", letters.get(0).get("seq").asText());
            assertEquals(0, replay.status(), replay.toString());
            assertTrue(replay.out().contains("no relay runs on this spool; it takes them into its spool when it"
                    + " starts"), replay.out());
            PackagedJar.Result purge = dead("purge", letters.get(1).get("seq").asText());
            assertEquals("purged 1 dead letter(s)", purge.out().strip());

            Set<String> took = ConcurrentHashMap.newKeySet();
            upstream.answer(taking(took));
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), relayArgs(port, upstream))) {
                await().atMost(SOON).until(() -> took.contains("key-gz"));
                TestUpstream.Received again = upstream.received().stream()
                        .filter(r -> "key-gz".equals(r.header("Idempotency-Key")))
                        .reduce((a, b) -> b).orElseThrow();
                assertArrayEquals(gzipped, again.body(), "still compressed, byte for byte");
                assertEquals("gzip", again.header("Content-Encoding"));
                assertEquals("sender-key", again.header("x-mcpd-key"), "the sender's credential went with it");
                assertFalse(took.contains("key-plain"), "a purged one is gone for good");
                assertEquals(0, deadCount(relay));
            }
        }
    }

    /** Dead-letters {@code n} requests and returns their keys. */
    private List<String> deadLetter(PackagedJar relay, int n) throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String key = "k-" + i + "-" + UUID.randomUUID();
            post(relay, key, "application/json", ("{\"events\":[{\"i\":" + i + "}]}").getBytes(), null);
            keys.add(key);
        }
        await().atMost(SOON).until(() -> deadCount(relay) == n);
        return keys;
    }

    @Test
    void aKill9OfTheCliMidReplayLosesNothing() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> Answer.status(422))) {
            int port = PackagedJar.freePort();
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), relayArgs(port, upstream))) {
                List<String> keys = deadLetter(relay, 300);
                Set<String> took = ConcurrentHashMap.newKeySet();
                upstream.answer(taking(took));
                PackagedJar cli = PackagedJar.launch(tmp, 0, Map.of(), List.of(), "relay", "dead", "replay", "--all",
                        "--spool-dir", tmp.resolve("spool").toString());
                // Killed once it has handed some over and not all: in the middle. dead/ itself is counted: the
                // relay's census of it is read again at most once a second, too late to catch the middle.
                await().atMost(SOON).pollInterval(Duration.ofMillis(5)).until(() -> deadEntryFiles() < 290
                        || !cli.isAlive());
                assertTrue(cli.isAlive(), "the replay of 300 ended before it could be killed: " + cli.logTail(5));
                cli.kill9();
                long leftDead = listJson().size();
                assertTrue(leftDead > 0 && leftDead < 300, leftDead + " left in dead/");
                // Whatever the kill left in dead/ is replayed again; every key reaches the upstream.
                PackagedJar.Result rest = dead("replay", "--all");
                assertEquals(0, rest.status(), rest.toString());
                await().atMost(Duration.ofSeconds(60)).until(() -> took.containsAll(keys));
                await().atMost(SOON).until(() -> status(relay).path("spool").path("entries").asLong() == 0);
                assertEquals(0, deadCount(relay));
            }
        }
    }

    @Test
    void aKill9OfTheRelayMidReplayLosesNothing() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> Answer.status(422))) {
            int port = PackagedJar.freePort();
            List<String> keys;
            PackagedJar cli;
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), relayArgs(port, upstream))) {
                keys = deadLetter(relay, 300);
                upstream.answer(r -> Answer.status(503)); // down: what the relay takes waits in its spool
                cli = PackagedJar.launch(tmp, 0, Map.of(), List.of(), "relay", "dead", "replay", "--all",
                        "--spool-dir", tmp.resolve("spool").toString());
                await().atMost(SOON).pollInterval(Duration.ofMillis(5))
                        .until(() -> status(relay).path("spool").path("entries").asLong() > 0 || !cli.isAlive());
                relay.kill9();
            }
            assertEquals(0, cli.awaitExit(Duration.ofSeconds(60)), "the replay ends on its own: " + cli.logTail(5));
            Set<String> took = ConcurrentHashMap.newKeySet();
            upstream.answer(taking(took));
            try (PackagedJar restarted = PackagedJar.start(tmp, port, Map.of(), relayArgs(port, upstream))) {
                await().atMost(Duration.ofSeconds(60)).until(() -> took.containsAll(keys));
                assertEquals(0, deadCount(restarted), "nothing was left in dead/");
            }
        }
    }

    @Test
    void aStatusNamedRetryableIsRetriedAndNothingReachesDead() throws Exception {
        AtomicInteger conflicts = new AtomicInteger();
        try (TestUpstream upstream = TestUpstream.start()
                .answer(r -> conflicts.incrementAndGet() <= 2 ? Answer.status(409) : Answer.ok())) {
            int port = PackagedJar.freePort();
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(),
                    relayArgs(port, upstream, "--retryable-status", "409,425"))) {
                post(relay, "key-409", "application/json", "{\"events\":[]}".getBytes(), null);
                await().atMost(SOON).until(() -> upstream.received().size() >= 3
                        && status(relay).path("spool").path("entries").asLong() == 0);
                assertEquals(0, deadCount(relay));
                assertTrue(listJson().isEmpty());
            }
        }
    }

    @Test
    void anEntryWaitingLongerThanTheMaxAgeExpiresIntoDeadIsCountedAndReplayable() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> Answer.status(503)).readyStatus(503)) {
            int port = PackagedJar.freePort();
            try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(),
                    relayArgs(port, upstream, "--spool-max-age", "2s"))) {
                post(relay, "key-old", "application/json", "{\"events\":[]}".getBytes(), null);
                await().atMost(SOON).until(() -> deadCount(relay) == 1);
                List<JsonNode> letters = listJson();
                assertTrue(letters.get(0).get("reason").asText().startsWith("expired: waited "), letters.toString());
                assertEquals(0, letters.get(0).get("status").asInt());
                String metrics = client.send(HttpRequest.newBuilder(relay.uri("/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                assertTrue(metrics.contains("mcpd_relay_expired_total 1.0"), metrics);
                assertTrue(metrics.contains("mcpd_relay_dead_letters 1.0"), metrics);
                // The sweep that follows says it, once, with the count (the lane that held it counted it).
                String line = "expired 1 entry that waited longer than --spool-max-age 2s";
                await().atMost(SOON).until(() -> relay.logTail(400).contains(line));
                assertEquals(1, relay.logTail(400).lines().filter(l -> l.contains(line)).count(), relay.logTail(40));
                upstream.answer(r -> Answer.ok()).readyStatus(200);
                PackagedJar.Result replay = dead("replay", "--all");
                assertEquals(0, replay.status(), replay.toString());
                await().atMost(SOON).until(() -> upstream.received().stream()
                        .anyMatch(r -> r.header("Idempotency-Key").equals("key-old") && deadCountQuietly(relay) == 0));
            }
        }
    }

    private long deadCountQuietly(PackagedJar relay) {
        try {
            return deadCount(relay);
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void badValuesAreOneLineAndExitTwo() {
        for (String[] args : List.of(new String[] {"relay", "--retryable-status", "503"},
                new String[] {"relay", "--spool-max-age", "forever"},
                new String[] {"relay", "dead", "purge", "--older-than", "soon", "--spool-dir", tmp.toString()},
                new String[] {"relay", "dead", "replay", "--spool-dir", tmp.toString()})) {
            PackagedJar.Result result = PackagedJar.runJar(tmp, Map.of(), args);
            assertEquals(2, result.status(), String.join(" ", args) + ": " + result);
            assertEquals(1, result.errLines().size(), String.join(" ", args) + ": " + result);
        }
    }
}
