package dev.mcpd.relay;

import static dev.mcpd.testing.GrpcClient.framed;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.observability.RelaySync;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.GrpcClient;
import dev.mcpd.testing.RawHttp;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delivery barrier: every accepted answer carries {@code mcpd-relay-seq} and {@code mcpd-relay-id};
 * {@code GET /relay/sync?seq=N} answers 200 only once every entry up to N left the spool (delivered, asserted at the
 * upstream, or dead-lettered), 504 with what is pending when its timeout passes first, and refuses at once — before
 * any wait — what it cannot answer (400, 401, 409, 421).
 */
class RelaySyncTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final Pattern ID = Pattern.compile("[0-9a-f]{32}");

    @TempDir
    Path dir;

    @Test
    void anAcceptedAnswerCarriesTheTokenHeadersInTheFormTheConsistencyPageShows() throws Exception {
        List<String> shown = DocExample.block(Path.of("docs/consistency.md"), "token-headers").lines().toList();
        assertEquals(2, shown.size(), shown.toString());
        try (RunningRelay relay = RunningRelay.start(dir); RawHttp http = new RawHttp(relay.port(), 10_000)) {
            String body = "{\"events\":[]}";
            String answer = http.send("POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body).readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 202 "), answer);
            List<String> head = answer.substring(0, answer.indexOf("\r\n\r\n")).lines().toList();
            for (String line : shown) {
                // The name as written (scripts grep for it); the value in the form shown, not the sample's value.
                String name = line.substring(0, line.indexOf(": ") + 2);
                String value = line.substring(name.length());
                String form = ID.matcher(value).matches() ? ID.pattern() : value.matches("[0-9]+") ? "[1-9][0-9]*"
                        : null;
                assertTrue(form != null, "a value of a known form: " + line);
                Pattern header = Pattern.compile(Pattern.quote(name) + form);
                assertEquals(1, head.stream().filter(h -> header.matcher(h).matches()).count(),
                        line + " in\n" + answer);
            }
        }
    }

    /** An accepted request: its sequence number, its relay's id, its body. */
    record Accepted(long seq, String relay, String body) {
    }

    static Accepted post(RunningRelay relay, String path, String contentType, String text) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri(path))
                .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofString(text)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(answer.statusCode() / 100 == 2, answer.statusCode() + " " + answer.body());
        return new Accepted(Long.parseLong(answer.headers().firstValue("mcpd-relay-seq").orElseThrow()),
                answer.headers().firstValue("mcpd-relay-id").orElseThrow(), text);
    }

    static Accepted post(RunningRelay relay, String label) throws Exception {
        return post(relay, "/v1/ingest", "application/json",
                "{\"events\":[{\"label\":\"" + label + "\",\"id\":\"" + UUID.randomUUID() + "\"}]}");
    }

    static HttpResponse<String> sync(RunningRelay relay, String query) throws Exception {
        return sync(relay, query, Map.of());
    }

    static HttpResponse<String> sync(RunningRelay relay, String query, Map<String, String> headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri("/relay/sync?" + query))
                .timeout(Duration.ofSeconds(20)); // a refusal that waited for its 60 s timeout would fail here
        headers.forEach(request::header);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static boolean upstreamGot(TestUpstream upstream, Accepted accepted) {
        return upstream.received().stream()
                .anyMatch(r -> new String(r.body(), StandardCharsets.UTF_8).equals(accepted.body()));
    }

    // ---- sequence and identity ----

    @Test
    void everyAcceptedAnswerCarriesAGrowingSequenceAndTheRelaysId() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir);
             GrpcClient grpc = new GrpcClient(relay.port())) {
            List<Long> seqs = new ArrayList<>();
            List<String> ids = new ArrayList<>();
            for (Accepted a : List.of(post(relay, "native"),
                    post(relay, "/v1/traces", "application/x-protobuf", "protobuf bytes"),
                    post(relay, "/v1/logs", "application/json", "{\"resourceLogs\":[]}"),
                    post(relay, "/anything?x=1", "text/plain", "other path"))) {
                seqs.add(a.seq());
                ids.add(a.relay());
            }
            GrpcClient.Reply overGrpc = grpc.call(GrpcClient.TRACES, Map.of(), framed(new byte[] {1, 2}));
            assertEquals(0, overGrpc.grpcStatus());
            seqs.add(Long.parseLong(overGrpc.headers().get("mcpd-relay-seq")));
            ids.add(overGrpc.headers().get("mcpd-relay-id"));

            for (int i = 1; i < seqs.size(); i++) {
                assertTrue(seqs.get(i) > seqs.get(i - 1), "strictly growing: " + seqs);
            }
            assertTrue(ID.matcher(ids.get(0)).matches(), ids.get(0));
            assertEquals(1, ids.stream().distinct().count(), "one relay, one id: " + ids);
            assertEquals(relay.application().spool().id(), ids.get(0));
        }
    }

    @Test
    void aRestartKeepsTheIdAndGoesOnAboveEverySequenceAndANewSpoolHasANewId(@TempDir Path other) throws Exception {
        Accepted last;
        try (RunningRelay relay = RunningRelay.start(dir)) {
            post(relay, "one");
            last = post(relay, "two");
        }
        try (RunningRelay restarted = RunningRelay.start(dir)) {
            Accepted next = post(restarted, "three");
            assertEquals(last.relay(), next.relay(), "the same spool, the same id");
            assertTrue(next.seq() > last.seq(), next.seq() + " after " + last.seq());
        }
        try (RunningRelay fresh = RunningRelay.start(other)) {
            Accepted first = post(fresh, "elsewhere");
            assertFalse(first.relay().equals(last.relay()), "a new spool, a new id");
        }
    }

    // ---- the barrier ----

    @Test
    void syncIs504WhileAnEntryWaitsAnd200OnlyOnceEveryEntryUpToNReachedTheUpstream() throws Exception {
        AtomicReference<TestUpstream.Answer> answer = new AtomicReference<>(TestUpstream.Answer.status(503));
        try (TestUpstream upstream = TestUpstream.start().answer(r -> answer.get());
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            List<Accepted> sent = List.of(post(relay, "a"), post(relay, "b"), post(relay, "c"));
            long n = sent.get(2).seq();

            HttpResponse<String> waiting = sync(relay, "seq=" + n + "&timeout=300ms");
            assertEquals(504, waiting.statusCode(), waiting.body());
            JsonNode pending = JSON.readTree(waiting.body());
            assertEquals(3, pending.get("pending").asLong());
            assertEquals(n, pending.get("seq").asLong());
            assertEquals(sent.get(0).relay(), pending.get("relay").asText());

            answer.set(TestUpstream.Answer.ok());
            HttpResponse<String> drained = sync(relay, "seq=" + n + "&relay=" + sent.get(0).relay() + "&timeout=15s");
            assertEquals(200, drained.statusCode(), drained.body());
            assertEquals(0, JSON.readTree(drained.body()).get("pending").asLong());
            for (Accepted a : sent) {
                assertTrue(upstreamGot(upstream, a), "reached the upstream before the 200: " + a);
            }
        }
    }

    @Test
    void entriesFinishingOutOfOrderKeepTheBarrierClosedUntilTheOldestIsDone() throws Exception {
        Duration slow = Duration.ofMillis(700);
        try (TestUpstream upstream = TestUpstream.start().answer(r ->
                new String(r.body(), StandardCharsets.UTF_8).contains("\"slow\"")
                        ? TestUpstream.Answer.ok().after(slow) : TestUpstream.Answer.ok());
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            Accepted first = post(relay, "slow");
            await().atMost(PATIENCE).until(() -> upstreamGot(upstream, first)); // out, its answer 700 ms away
            Accepted second = post(relay, "fast");
            Accepted third = post(relay, "fast");
            await().atMost(PATIENCE).until(() -> relay.application().spool().oldestWaitingSeq() == first.seq()
                    && relay.application().spool().waitingThrough(third.seq()) == 1);

            HttpResponse<String> drained = sync(relay, "seq=" + third.seq() + "&timeout=15s");
            Instant answeredAt = Instant.now();
            assertEquals(200, drained.statusCode(), drained.body());
            Instant firstArrived = upstream.received().stream().filter(r -> new String(r.body(),
                    StandardCharsets.UTF_8).equals(first.body())).findFirst().orElseThrow().at();
            assertFalse(answeredAt.isBefore(firstArrived.plus(slow)),
                    "the barrier opened only after the oldest entry's answer, not when the newer ones were done");
            assertTrue(upstreamGot(upstream, second) && upstreamGot(upstream, third));
        }
    }

    @Test
    void deadLetteredEntriesPassTheBarrierAndFromCountsOnlyThoseOfTheJobThatBeganThere() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(400));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            post(relay, "an earlier job's, refused");
            Accepted first = post(relay, "this job's, refused");
            Accepted last = post(relay, "this job's, refused too");
            HttpResponse<String> all = sync(relay, "seq=" + last.seq() + "&timeout=15s");
            assertEquals(200, all.statusCode(), all.body());
            assertEquals(3, JSON.readTree(all.body()).get("deadLettered").asLong(), all.body());
            HttpResponse<String> job = sync(relay, "seq=" + last.seq() + "&from=" + first.seq());
            assertEquals(200, job.statusCode(), job.body());
            assertEquals(2, JSON.readTree(job.body()).get("deadLettered").asLong(), job.body());
            HttpResponse<String> backwards = sync(relay, "seq=" + first.seq() + "&from=" + last.seq());
            assertEquals(400, backwards.statusCode(), backwards.body());
        }
    }

    // ---- refused at once ----

    @Test
    void whatSyncCannotAnswerIsRefusedAtOnceBeforeAnyWait() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) { // its upstream is down: anything ≤ N waits
            Accepted accepted = post(relay, "waiting");
            String other = "0".repeat(32).equals(accepted.relay()) ? "1".repeat(32) : "0".repeat(32);
            Map<String, Integer> expected = new LinkedHashMap<>();
            expected.put("seq=" + accepted.seq() + "&relay=" + other + "&timeout=60s", 421);
            expected.put("seq=" + (accepted.seq() + 1) + "&timeout=60s", 409);
            expected.put("seq=abc&timeout=60s", 400);
            expected.put("timeout=60s", 400);
            expected.put("seq=-1", 400);
            expected.put("seq=" + accepted.seq() + "&timeout=61s", 400);
            expected.put("seq=" + accepted.seq() + "&timeout=soon", 400);
            expected.put("seq=" + accepted.seq() + "&relay=not-an-id", 400);
            expected.put("seq=" + accepted.seq() + "&seq=1", 400);
            expected.put("seq=" + accepted.seq() + "&timout=60s", 400);
            for (Map.Entry<String, Integer> query : expected.entrySet()) {
                HttpResponse<String> answer = sync(relay, query.getKey());
                assertEquals(query.getValue(), answer.statusCode(), query.getKey() + ": " + answer.body());
                assertEquals(1, answer.body().strip().lines().count(), "one line: " + answer.body());
            }
        }
    }

    @Test
    void withAnIngestKeySyncIs401WithoutIt(@TempDir Path keyed) throws Exception {
        try (RunningRelay relay = RunningRelay.start(keyed, Map.of("MCPD_INGEST_KEY", "sync-key"))) {
            HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                    .header("x-mcpd-key", "sync-key").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            long seq = Long.parseLong(answer.headers().firstValue("mcpd-relay-seq").orElseThrow());
            assertEquals(401, sync(relay, "seq=" + seq + "&timeout=60s").statusCode());
            assertEquals(401, sync(relay, "seq=abc").statusCode(), "the key first, then the parameters");
            assertEquals(504, sync(relay, "seq=" + seq + "&timeout=100ms",
                    Map.of("Authorization", "Bearer sync-key")).statusCode());
        }
    }

    static Scrape scrape(RunningRelay relay) throws Exception {
        return Scrape.of(HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    @Test
    void aCallerThatHangsUpWaitsNoLonger() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            Accepted accepted = post(relay, "never delivered while the caller waits");
            try (Socket caller = new Socket("127.0.0.1", relay.port())) {
                caller.getOutputStream().write(("GET /relay/sync?seq=" + accepted.seq() + "&timeout=60s HTTP/1.1\r\n"
                        + "Host: relay\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                caller.getOutputStream().flush();
                await().atMost(PATIENCE).until(() -> relay.application().spool().awaiting() == 1);
            }
            await().atMost(PATIENCE).until(() -> relay.application().spool().awaiting() == 0);
            assertEquals(0, scrape(relay).value("mcpd_relay_sync_waiters").orElseThrow());
        }
    }

    @Test
    void aStopEndsEveryWaitAtOnceWithWhatIsStillPending() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503))) {
            RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream);
            CompletableFuture<HttpResponse<String>> waiter;
            try {
                Accepted accepted = post(relay, "never delivered before the stop");
                waiter = HTTP.sendAsync(HttpRequest.newBuilder(relay.uri("/relay/sync?seq=" + accepted.seq()
                        + "&timeout=60s")).build(), HttpResponse.BodyHandlers.ofString());
                await().atMost(PATIENCE).until(() -> relay.application().spool().awaiting() == 1);
            } finally {
                relay.closePromptly(); // not the caller's 60 s
            }
            HttpResponse<String> answer = waiter.get(5, TimeUnit.SECONDS);
            assertEquals(504, answer.statusCode(), answer.body());
            assertEquals(1, JSON.readTree(answer.body()).get("pending").asInt());
        }
    }

    // ---- many waiters ----

    @Test
    void aThousandWaitersAreReleasedTogetherAndTheUpstreamSeesNoRequestOfTheirs() throws Exception {
        AtomicReference<TestUpstream.Answer> answer = new AtomicReference<>(TestUpstream.Answer.status(503));
        try (TestUpstream upstream = TestUpstream.start().answer(r -> answer.get());
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            Accepted accepted = post(relay, "awaited by a thousand");
            List<CompletableFuture<HttpResponse<String>>> waiters = new ArrayList<>();
            var client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .build();
            for (int i = 0; i < 1000; i++) {
                waiters.add(client.sendAsync(HttpRequest.newBuilder(relay.uri("/relay/sync?seq=" + accepted.seq()
                        + "&timeout=60s")).build(), HttpResponse.BodyHandlers.ofString()));
            }
            await().atMost(PATIENCE).until(() -> relay.application().spool().awaiting() == 1000);
            Accepted meanwhile = post(relay, "accepted while a thousand wait"); // no worker thread is held
            assertTrue(meanwhile.seq() > accepted.seq());
            JsonNode status = JSON.readTree(HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("sync");
            assertEquals(1000, status.get("waiters").asInt());
            assertEquals(accepted.seq(), status.get("oldestWaitingSeq").asLong());
            assertEquals(meanwhile.seq(), status.get("newestSeq").asLong());
            assertEquals(1000, scrape(relay).value("mcpd_relay_sync_waiters").orElseThrow());
            answer.set(TestUpstream.Answer.ok());
            for (CompletableFuture<HttpResponse<String>> waiter : waiters) {
                assertEquals(200, waiter.get(30, TimeUnit.SECONDS).statusCode());
            }
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(0, relay.application().spool().awaiting());
            Scrape after = scrape(relay);
            assertEquals(0, after.value("mcpd_relay_sync_waiters").orElseThrow());
            assertTrue(after.value("mcpd_relay_sync_wait_seconds_count").orElseThrow() >= 1000, "every wait timed");
            assertEquals("histogram", after.types().get("mcpd_relay_sync_wait_seconds"));
            long buckets = after.samples().keySet().stream().filter(k -> k.startsWith("mcpd_relay_sync_wait_seconds_bucket"))
                    .count();
            assertEquals(RelaySync.WAIT_BUCKETS.size() + 1, buckets, "a bucket per bound, and +Inf");
            assertTrue(upstream.received().stream().allMatch(r -> {
                String body = new String(r.body(), StandardCharsets.UTF_8);
                return body.equals(accepted.body()) || body.equals(meanwhile.body());
            }), "the upstream saw the two entries (and their retries) and nothing else");
            assertTrue(upstream.received().stream().noneMatch(r -> r.uri().contains("sync")));
        }
    }
}
