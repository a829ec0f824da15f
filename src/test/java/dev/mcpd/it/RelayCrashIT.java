package dev.mcpd.it;

import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolReader;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.TestTuning;
import dev.mcpd.wire.DerivedIdempotencyKey;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * "A 2xx is a promise: after it, neither a crash, a kill -9, nor a restart may lose that request."
 *
 * <p>Once for the class: the packaged relay is started; {@value #SENDERS} threads post {@value #REQUESTS} distinct
 * requests (1–8 KiB bodies; {@code /v1/ingest} JSON, some with a query, and {@code /v1/traces} protobuf; some
 * gzip-encoded, some with their own {@code Idempotency-Key}); as soon as {@value #KILL_AFTER_ACKS} have been answered
 * 2xx the relay is killed with SIGKILL while the others are in flight. The spool directory is then read back with
 * {@link SpoolReader} and compared with exactly what was sent and what was acknowledged. The last test restarts the
 * relay on the same spool. {@code -Dcrash.seed=N} replays the bodies of a run (the seed is printed).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RelayCrashIT {

    static final int REQUESTS = 200;
    static final int SENDERS = 16;
    static final int KILL_AFTER_ACKS = 100;
    static final Duration ACK_DEADLINE = Duration.ofSeconds(60);

    @TempDir
    static Path tmp;

    /** One request as the sender built it. */
    record Sent(int id, String target, String contentType, String contentEncoding, String senderKey, byte[] body) {

        boolean ingest() {
            return target.startsWith("/v1/ingest");
        }

        String describe() {
            return "request #" + id + " (POST " + target + ", " + contentType
                    + (contentEncoding.isEmpty() ? "" : ", " + contentEncoding)
                    + (senderKey == null ? "" : ", Idempotency-Key " + senderKey) + ", " + body.length + " bytes)";
        }
    }

    /** What the spool held after the kill, with everything the senders recorded. */
    record Crash(List<Sent> sent, boolean[] attempted, boolean[] acknowledged, String[] outcome,
                 long startedMillis, long killedMillis, SpoolReader.Contents contents, List<Path> segments,
                 Map<Integer, List<SpoolEntry>> spooledById, List<SpoolEntry> phantoms) {

        int count(boolean[] flags) {
            return (int) IntStream.range(0, flags.length).filter(i -> flags[i]).count();
        }

        long maxSeq() {
            return contents.entries().stream().mapToLong(SpoolEntry::seq).max().orElse(0);
        }
    }

    private static Crash crash;
    private static PackagedJar restarted;

    // ---------------------------------------------------------------------------------------------- the crash

    @BeforeAll
    static void sendAndKill9() throws Exception {
        long seed = Long.getLong("crash.seed", System.nanoTime());
        System.out.println("crash.seed=" + seed);
        List<Sent> sent = requests(new Random(seed));
        Path data = Files.createDirectories(tmp.resolve("data"));

        int port = PackagedJar.freePort();
        long startedMillis = System.currentTimeMillis();
        PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), "relay", "--listen", "127.0.0.1:" + port,
                "--data", data.resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:9");

        boolean[] attempted = new boolean[REQUESTS];
        AtomicIntegerArray attemptedFlags = new AtomicIntegerArray(REQUESTS);
        AtomicIntegerArray ackFlags = new AtomicIntegerArray(REQUESTS);
        AtomicReferenceArray<String> outcomes = new AtomicReferenceArray<>(REQUESTS);
        CountDownLatch enoughAcks = new CountDownLatch(KILL_AFTER_ACKS);
        AtomicInteger next = new AtomicInteger();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
        long killedMillis;
        try {
            for (int t = 0; t < SENDERS; t++) {
                senders.submit(() -> {
                    for (int i = next.getAndIncrement(); i < REQUESTS; i = next.getAndIncrement()) {
                        Sent request = sent.get(i);
                        attemptedFlags.set(i, 1);
                        try {
                            HttpResponse<byte[]> answer = client.send(httpRequest(relay, request),
                                    HttpResponse.BodyHandlers.ofByteArray());
                            outcomes.set(i, describeAnswer(answer));
                            if (answer.statusCode() / 100 == 2) {
                                ackFlags.set(i, 1);
                                enoughAcks.countDown();
                            }
                        } catch (IOException e) {
                            outcomes.set(i, "no answer: " + e);
                        } catch (InterruptedException e) {
                            outcomes.set(i, "interrupted");
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                });
            }
            if (!enoughAcks.await(ACK_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
                fail("only " + (KILL_AFTER_ACKS - enoughAcks.getCount()) + " of " + REQUESTS + " requests were "
                        + "acknowledged within " + ACK_DEADLINE.toSeconds() + " s; answers: "
                        + summary(outcomes) + "\nrelay log ends with:\n" + relay.logTail(40));
            }
            relay.kill9();
            killedMillis = System.currentTimeMillis();
        } finally {
            relay.close();
            senders.shutdown();
            if (!senders.awaitTermination(60, TimeUnit.SECONDS)) {
                senders.shutdownNow();
                fail("senders still busy 60 s after the kill");
            }
        }

        boolean[] acknowledged = new boolean[REQUESTS];
        String[] outcome = new String[REQUESTS];
        for (int i = 0; i < REQUESTS; i++) {
            attempted[i] = attemptedFlags.get(i) == 1;
            acknowledged[i] = ackFlags.get(i) == 1;
            outcome[i] = outcomes.get(i);
        }

        Path spoolDir = relaySpool();
        SpoolReader.Contents contents = SpoolReader.read(spoolDir);
        List<Path> segments;
        try (Stream<Path> files = Files.list(spoolDir)) {
            segments = files.filter(f -> f.getFileName().toString().endsWith(".seg")).sorted().toList();
        }
        Map<String, Integer> idByBody = new HashMap<>();
        for (Sent request : sent) {
            idByBody.put(sha256(request.body()), request.id());
        }
        Map<Integer, List<SpoolEntry>> spooledById = new HashMap<>();
        List<SpoolEntry> phantoms = new ArrayList<>();
        for (SpoolEntry entry : contents.entries()) {
            Integer id = idByBody.get(sha256(entry.request().body()));
            if (id == null) {
                phantoms.add(entry);
            } else {
                spooledById.computeIfAbsent(id, k -> new ArrayList<>()).add(entry);
            }
        }
        crash = new Crash(sent, attempted, acknowledged, outcome, startedMillis, killedMillis, contents, segments,
                spooledById, phantoms);

        int acked = crash.count(acknowledged);
        long spooledUnacked = spooledById.keySet().stream().filter(id -> !acknowledged[id]).count();
        System.out.printf("crash run: %d sent (attempted), %d acknowledged, %d spooled entries (%d of them never "
                        + "acknowledged), %d phantom entries, segments %s, damage %s%n", crash.count(attempted), acked,
                contents.entries().size(), spooledUnacked, phantoms.size(),
                segments.stream().map(p -> p.getFileName().toString()).toList(), contents.damage());
    }

    @AfterAll
    static void stopRestartedRelay() {
        if (restarted != null) {
            restarted.close();
        }
    }

    // ---------------------------------------------------------------------------------------------- the tests

    @Test
    @Order(1)
    void theKillLandsWhileRequestsAreStillInFlight() {
        int acked = crash.count(crash.acknowledged());
        assertTrue(acked >= KILL_AFTER_ACKS, "at least " + KILL_AFTER_ACKS + " acknowledged, got " + acked);
        assertTrue(acked < REQUESTS, "the kill should come before every request was answered (otherwise this run "
                + "tested no crash): all " + REQUESTS + " were acknowledged");
        List<String> wrongAnswers = new ArrayList<>();
        for (Sent request : crash.sent()) {
            String outcome = crash.outcome()[request.id()];
            if (outcome != null && !outcome.startsWith("no answer") && !crash.acknowledged()[request.id()]) {
                wrongAnswers.add(request.describe() + ": " + outcome);
            }
            String expected = request.ingest() ? "202" : "200";
            if (crash.acknowledged()[request.id()] && !outcome.startsWith(expected)) {
                wrongAnswers.add(request.describe() + ": expected " + expected + ", got " + outcome);
            }
        }
        assertEquals(List.of(), wrongAnswers, "before the kill every request is answered 202 (/v1/ingest) or 200 "
                + "(/v1/traces); after it, not at all");
    }

    @Test
    @Order(2)
    void everyAcknowledgedRequestSurvivesKill9ByteForByte() {
        List<String> problems = new ArrayList<>();
        for (Sent request : crash.sent()) {
            List<SpoolEntry> entries = crash.spooledById().getOrDefault(request.id(), List.of());
            if (crash.acknowledged()[request.id()] && entries.size() != 1) {
                problems.add(request.describe() + " was acknowledged (" + crash.outcome()[request.id()]
                        + ") but the spool holds it " + entries.size() + " time(s)");
            }
            for (SpoolEntry entry : entries) {
                problems.addAll(differences(request, entry.request(), crash.startedMillis(), crash.killedMillis()));
            }
        }
        assertEquals(List.of(), problems, problems.size() + " problem(s) with acknowledged or spooled requests");
    }

    @Test
    @Order(3)
    void theSpoolHoldsNoRequestThatWasNeverSentAndNoneTwice() {
        List<String> problems = new ArrayList<>();
        for (SpoolEntry phantom : crash.phantoms()) {
            problems.add("entry " + phantom.seq() + " matches no request that was sent: " + phantom.request());
        }
        crash.spooledById().forEach((id, entries) -> {
            if (!crash.attempted()[id]) {
                problems.add("entry " + entries.get(0).seq() + " holds " + crash.sent().get(id).describe()
                        + ", which was never sent");
            }
            if (entries.size() > 1) {
                problems.add(crash.sent().get(id).describe() + " was sent once but spooled " + entries.size()
                        + " times: seqs " + entries.stream().map(SpoolEntry::seq).toList());
            }
        });
        long previous = 0;
        for (SpoolEntry entry : crash.contents().entries()) {
            if (entry.seq() <= previous) {
                problems.add("sequence numbers must grow: " + entry.seq() + " follows " + previous);
            }
            previous = entry.seq();
        }
        assertEquals(List.of(), problems);
    }

    @Test
    @Order(4)
    void aKill9TearsAtMostTheTailOfTheSegmentBeingWritten() {
        List<String> damage = crash.contents().damage();
        System.out.println("damage after kill -9: " + (damage.isEmpty() ? "none" : damage));
        assertTrue(damage.size() <= 1, "at most one segment (the one being appended to) may be torn: " + damage);
        if (!damage.isEmpty()) {
            String newest = crash.segments().get(crash.segments().size() - 1).getFileName().toString();
            String line = damage.get(0);
            assertTrue(line.startsWith(newest + ": torn record"), "only a torn record at the end of the newest "
                    + "segment " + newest + " is acceptable after kill -9 (a bad checksum or magic is not): " + line);
        }
    }

    @Test
    @Order(5)
    void aRestartedRelayKeepsEveryEntryAndNumbersNewRequestsAfterThem() throws Exception {
        int port = PackagedJar.freePort();
        restarted = PackagedJar.start(tmp, port, Map.of(), "relay", "--listen", "127.0.0.1:" + port, "--data",
                tmp.resolve("data").resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:9");

        SpoolReader.Contents afterRestart = SpoolReader.read(relaySpool());
        assertEquals(fingerprints(crash.contents().entries()), fingerprints(afterRestart.entries()),
                "the restarted relay's spool holds the same entries as right after the kill");
        List<String> newDamage = afterRestart.damage().stream()
                .filter(line -> !crash.contents().damage().contains(line)).toList();
        assertEquals(List.of(), newDamage, "a restart adds no damage");

        Sent extra = new Sent(REQUESTS, "/v1/ingest", "application/json", "", "crash-it-after-restart-"
                + UUID.randomUUID(), ("{\"after\":\"restart\",\"id\":\"" + UUID.randomUUID() + "\"}")
                .getBytes(StandardCharsets.UTF_8));
        HttpClient client = TestTuning.HTTP;
        long before = System.currentTimeMillis();
        HttpResponse<String> answer = client.send(httpRequest(restarted, extra), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), "answer after restart: " + answer.body());

        SpoolReader.Contents withExtra = SpoolReader.read(relaySpool());
        List<SpoolEntry> found = withExtra.entries().stream()
                .filter(e -> Arrays.equals(e.request().body(), extra.body())).toList();
        assertEquals(1, found.size(), "the request acknowledged after the restart is spooled once: " + found);
        SpoolEntry entry = found.get(0);
        assertEquals(List.of(), differences(extra, entry.request(), before, System.currentTimeMillis()));
        long highest = afterRestart.entries().stream().mapToLong(SpoolEntry::seq).max().orElse(0);
        assertTrue(entry.seq() > highest, "the new entry's seq " + entry.seq() + " must exceed every earlier "
                + "entry's (highest " + highest + ")");
        assertEquals(afterRestart.entries().size() + 1, withExtra.entries().size(),
                "nothing but the new request was added");
        System.out.println("after restart: " + afterRestart.entries().size() + " entries kept, new request spooled "
                + "as seq " + entry.seq());
        restarted.terminate();
    }

    // ---------------------------------------------------------------------------------------------- requests

    /** Distinct requests: 1–8 KiB bodies, each holding its id and random bytes, in a mix of paths and headers. */
    static List<Sent> requests(Random random) {
        String run = UUID.randomUUID().toString();
        List<Sent> requests = new ArrayList<>();
        for (int id = 0; id < REQUESTS; id++) {
            int size = 1024 + random.nextInt(7 * 1024 + 1);
            String target;
            String contentType;
            byte[] body;
            if (id % 2 == 0) {
                target = id % 6 == 0 ? "/v1/ingest?source=crash-it&n=" + id : "/v1/ingest";
                contentType = "application/json";
                byte[] noise = new byte[size * 3 / 4];
                random.nextBytes(noise);
                body = ("{\"run\":\"" + run + "\",\"id\":" + id + ",\"events\":[{\"blob\":\""
                        + Base64.getEncoder().encodeToString(noise) + "\"}]}").getBytes(StandardCharsets.UTF_8);
            } else {
                target = "/v1/traces";
                contentType = "application/x-protobuf";
                byte[] prefix = ("crash-it " + run + " #" + id + " ").getBytes(StandardCharsets.UTF_8);
                body = new byte[size];
                random.nextBytes(body);
                System.arraycopy(prefix, 0, body, 0, prefix.length);
            }
            String encoding = "";
            if (id % 3 == 0) {
                encoding = "gzip";
                body = gzip(body);
            }
            String senderKey = id % 5 == 0 ? "crash-it-" + run + "-" + id : null;
            requests.add(new Sent(id, target, contentType, encoding, senderKey, body));
        }
        return requests;
    }

    static HttpRequest httpRequest(PackagedJar relay, Sent request) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(relay.uri(request.target()))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", request.contentType())
                .POST(HttpRequest.BodyPublishers.ofByteArray(request.body()));
        if (!request.contentEncoding().isEmpty()) {
            builder.header("Content-Encoding", request.contentEncoding());
        }
        if (request.senderKey() != null) {
            builder.header("Idempotency-Key", request.senderKey());
        }
        return builder.build();
    }

    /** Everything in which the spooled copy differs from what was sent (empty when it is identical). */
    static List<String> differences(Sent sent, SpoolRequest spooled, long notBeforeMillis, long notAfterMillis) {
        List<String> problems = new ArrayList<>();
        String what = sent.describe() + " spooled as " + spooled + ": ";
        if (!Arrays.equals(sent.body(), spooled.body())) {
            problems.add(what + "body differs (" + spooled.body().length + " bytes spooled)");
        }
        if (!"POST".equals(spooled.method())) {
            problems.add(what + "method " + spooled.method());
        }
        if (!sent.target().equals(spooled.target())) {
            problems.add(what + "target " + spooled.target());
        }
        if (!sent.contentType().equals(spooled.contentType())) {
            problems.add(what + "content type " + spooled.contentType());
        }
        if (!sent.contentEncoding().equals(spooled.contentEncoding())) {
            problems.add(what + "content encoding '" + spooled.contentEncoding() + "'");
        }
        String key = sent.senderKey() != null ? sent.senderKey()
                : DerivedIdempotencyKey.of(sent.target(), sent.contentEncoding(), sent.body());
        if (!key.equals(spooled.idempotencyKey())) {
            problems.add(what + "idempotency key " + spooled.idempotencyKey() + ", expected " + key);
        }
        if (spooled.credential().isPresent()) {
            problems.add(what + "a credential, though the sender sent none");
        }
        if (spooled.receivedAtMillis() < notBeforeMillis - 1000 || spooled.receivedAtMillis() > notAfterMillis + 1000) {
            problems.add(what + "received at " + spooled.receivedAtMillis() + ", outside the run ["
                    + notBeforeMillis + ", " + notAfterMillis + "]");
        }
        return problems;
    }

    // ---------------------------------------------------------------------------------------------- helpers

    static Path relaySpool() {
        return tmp.resolve("data").resolve("mcpd.spool").resolve("relay");
    }

    /** seq, target, key and body digest of each entry: what must not change across a restart. */
    static List<String> fingerprints(List<SpoolEntry> entries) {
        return entries.stream().map(e -> e.seq() + " " + e.request().target() + " " + e.request().idempotencyKey()
                + " " + sha256(e.request().body())).toList();
    }

    static String describeAnswer(HttpResponse<byte[]> answer) {
        String body = new String(answer.body(), StandardCharsets.UTF_8);
        return answer.statusCode() + " " + answer.headers().firstValue("mcpd-relay").orElse("-") + " "
                + (body.length() > 200 ? body.substring(0, 200) + "…" : body);
    }

    static String summary(AtomicReferenceArray<String> outcomes) {
        return IntStream.range(0, outcomes.length()).mapToObj(outcomes::get)
                .map(o -> o == null ? "not sent" : o.length() > 60 ? o.substring(0, 60) : o)
                .collect(Collectors.groupingBy(o -> o, Collectors.counting())).toString();
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
