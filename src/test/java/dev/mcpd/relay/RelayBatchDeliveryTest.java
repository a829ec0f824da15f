package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.collector.RunningCollector;
import dev.mcpd.collector.StoredBatches;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.DocExample;
import dev.mcpd.wire.RelayBatch;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * To an mcpd collector that says it takes relay batches, waiting entries that share a credential travel
 * together, every entry keeps its bytes and gets its own outcome, and a lost answer is recognised entry by entry.
 * Entries are spooled by a relay whose upstream is down; a relay started on the same spool then finds them waiting
 * (its lanes wait for the first probe to tell them the upstream takes batches), and they travel as batches.
 */
class RelayBatchDeliveryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Probes every 200 ms, so the relay sees the collector (and that it takes batches) at once. */
    static final RelayApplication.Tuning TUNING = DeliveryTest.FAST.withProbes(Duration.ofMillis(200),
            Duration.ofSeconds(30));

    @TempDir
    Path dir;

    static byte[] event(String id) {
        return ("{\"events\":[{\"id\":\"" + id + "\"}]}").getBytes(StandardCharsets.UTF_8);
    }

    /** What a test posts to a relay whose upstream is down. */
    interface Posts {
        void to(RunningRelay relay) throws Exception;
    }

    /** Posts {@code count} events, {@code <name><i>} with the key {@code <name>-<i>}. */
    private static void postKeyed(RunningRelay relay, String name, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            post(relay, "/v1/ingest", event(name + i), "Content-Type", "application/json", "Idempotency-Key",
                    name + "-" + i);
        }
    }

    /** Spools what {@code posts} sends, with no upstream to deliver it to, and stops that relay. */
    private void spooled(Posts posts) throws Exception {
        try (RunningRelay down = RunningRelay.start(dir.resolve("relay"), Map.of(), TUNING)) {
            posts.to(down);
        }
    }

    /** A relay on the spool {@link #spooled} filled, delivering to {@code upstream}. */
    private RunningRelay relayTo(String upstream) {
        return RunningRelay.start(dir.resolve("relay"), Map.of("MCPD_UPSTREAMS", upstream), TUNING);
    }

    private static JsonNode upstreamStatus(RunningRelay relay) throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body()).get("upstreams").get(0);
    }

    @Test
    void aBatchGoesOutWithTheHeadTheRelayBatchPageShows() throws Exception {
        // The page's lines, without their notes in parentheses; its placeholder is this sender's key.
        List<String> shown = DocExample.block(Path.of("docs/relay-batch.md"), "relay-batch-request").lines()
                .map(line -> line.replaceAll("\\s{2,}\\(.*\\)$", "")
                        .replaceAll("<the entries' shared credential>", "tenant-a"))
                .toList();
        // An uncompressed entry of at least 1 KiB that gzip shrinks: a batch of one, its framing gzipped.
        byte[] large = ("{\"events\":[{\"log\":\"" + "compressible ".repeat(200) + "\"}]}")
                .getBytes(StandardCharsets.UTF_8);
        spooled(relay -> post(relay, "/v1/ingest", large, "Content-Type", "application/json", "Authorization",
                "Bearer tenant-a"));
        try (TestUpstream upstream = TestUpstream.start().capabilities(RelayBatch.CAPABILITY)
                .answer(r -> allArchived(1));
             RunningRelay relay = relayTo(upstream.url().toString())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            TestUpstream.Received batch = upstream.received().get(0);
            String[] requestLine = shown.get(0).split(" ");
            assertEquals(requestLine[0] + " " + requestLine[1], batch.method() + " " + batch.uri());
            assertEquals("HTTP/1.1", requestLine[2], "the version this upstream speaks");
            for (String header : shown.subList(1, shown.size())) {
                String name = header.substring(0, header.indexOf(": "));
                assertEquals(header, name + ": " + batch.header(name));
            }
            assertArrayEquals(large, decode(batch).get(0).body());
        }
    }

    @Test
    void waitingEntriesTravelInBatchesAndArriveByteForByte() throws Exception {
        byte[] binary = new byte[4096];
        new Random(7).nextBytes(binary);
        record Sent(String path, String contentType, String contentEncoding, String key, byte[] body) {
        }
        List<Sent> sent = new ArrayList<>();
        sent.add(new Sent("/v1/ingest", "application/json", "gzip", "k-gzip", gzip(event("gz"))));
        sent.add(new Sent("/v1/traces", "application/x-protobuf", "", "k-proto", binary));
        sent.add(new Sent("/v1/logs", "application/x-protobuf", "", "k-empty", new byte[0]));
        sent.add(new Sent("/v1/metrics?tenant=a%2Fb", "application/json;charset=utf-8", "", "k-query",
                "{\"resourceMetrics\":[]}".getBytes(StandardCharsets.UTF_8)));
        for (int i = 0; i < 40; i++) {
            sent.add(new Sent("/v1/ingest", "application/json", "", "k-" + i, event("n" + i)));
        }
        spooled(relay -> {
            for (Sent s : sent) {
                List<String> headers = new ArrayList<>(List.of("Content-Type", s.contentType(), "Idempotency-Key",
                        s.key()));
                if (!s.contentEncoding().isEmpty()) {
                    headers.addAll(List.of("Content-Encoding", s.contentEncoding()));
                }
                assertEquals(2, post(relay, s.path(), s.body(), headers.toArray(String[]::new)) / 100);
            }
        });
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            try (RunningRelay relay = relayTo(collector.baseUrl())) {
                await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
                for (Sent s : sent) {
                    Optional<StoredBatches.Row> row = StoredBatches.withKey(collector.dataFile(), s.key());
                    assertTrue(row.isPresent(), s.key() + " archived");
                    assertArrayEquals(s.body(), row.get().body(), s.key() + ": the body as sent");
                    assertEquals(s.path(), row.get().target());
                    assertEquals(s.contentType(), row.get().contentType());
                    assertEquals(s.contentEncoding(), row.get().contentEncoding());
                }
                JsonNode upstream = upstreamStatus(relay);
                assertTrue(upstream.get("batches").asBoolean(), "the collector said it takes batches");
                assertEquals("h2", upstream.get("protocol").asText(), "the collector said it speaks h2c");
                assertEquals(sent.size(), upstream.get("delivered").asInt(), "delivered counts entries");
                // The four delivery lanes take the waiting entries side by side: a batch each, at most; and the
                // /v1/metrics entry, an ordered stream of its own (by default), its own request.
                assertTrue(upstream.get("requests").asInt() <= 4 + 1,
                        "entries travelled together: " + upstream.get("requests") + " requests for " + sent.size());
                assertEquals(0, relay.application().deadLetters().count());
            }
        }
    }

    @Test
    void anEntryTheCollectorRefusesGoesToDeadAloneAndTheOthersOfItsBatchAreArchived() throws Exception {
        spooled(relay -> {
            postKeyed(relay, "ok", 10);
            post(relay, "/v1/ingest", "{\"events\": [".getBytes(StandardCharsets.UTF_8), "Content-Type",
                    "application/json", "Idempotency-Key", "broken");
            post(relay, "/v1/nowhere", event("lost"), "Content-Type", "application/json", "Idempotency-Key", "nowhere");
        });
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            try (RunningRelay relay = relayTo(collector.baseUrl())) {
                await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
                for (int i = 0; i < 10; i++) {
                    assertTrue(StoredBatches.withKey(collector.dataFile(), "ok-" + i).isPresent(), "ok-" + i);
                }
                List<SpoolEntry> dead = relay.application().deadLetters().entries();
                assertEquals(Set.of("broken", "nowhere"), Set.copyOf(dead.stream()
                        .map(e -> e.request().idempotencyKey()).toList()));
                Map<String, String> why = new HashMap<>();
                for (Path record : Files.newDirectoryStream(relay.application().deadLetters()
                        .directory(), "*.json")) {
                    JsonNode refusal = JSON.readTree(record.toFile());
                    why.put(String.valueOf(refusal.path("status").asInt()), refusal.path("reason").asText());
                }
                assertTrue(why.containsKey("400") && why.get("400").contains("malformed"), why.toString());
                assertTrue(why.containsKey("404"), why.toString());
                assertTrue(upstreamStatus(relay).get("requests").asInt() <= 4, "a batch per lane at most");
            }
        }
    }

    @Test
    void aBatchWhoseAnswerIsLostIsSentAgainAndEachEntryIsStoredOnce() throws Exception {
        spooled(relay -> {
            for (int i = 0; i < 20; i++) {
                post(relay, "/v1/ingest", event("e" + i), "Content-Type", "application/json", "Idempotency-Key",
                        "lost-" + i);
            }
        });
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"))) {
            AtomicBoolean lose = new AtomicBoolean(true);
            List<Integer> batchSizes = new CopyOnWriteArrayList<>();
            // In front of the collector: forwards everything, and loses the answer to the first batch — after the
            // collector committed it.
            try (TestUpstream front = TestUpstream.start().capabilities(RelayBatch.CAPABILITY)
                        .answer(r -> {
                            TestUpstream.Answer answer = Forward.to(URI.create(collector.baseUrl()), r);
                            if (r.uri().equals(RelayBatch.PATH)) {
                                batchSizes.add(entriesIn(r));
                                if (lose.getAndSet(false)) {
                                    return TestUpstream.Answer.lost();
                                }
                            }
                            return answer;
                        });
                 RunningRelay relay = relayTo(front.url().toString())) {
                {
                    await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
                    JsonNode stats = JSON.readTree(HTTP.send(HttpRequest.newBuilder(collector.uri("/v1/stats"))
                            .build(), HttpResponse.BodyHandlers.ofString()).body());
                    assertEquals(20, stats.get("events").asInt(), "each entry stored once");
                    assertTrue(batchSizes.get(0) > 1, "the lost answer was a batch's: " + batchSizes);
                    assertEquals(batchSizes.get(0), stats.get("duplicates").asInt(),
                            "every entry of the lost batch was recognised when it came again");
                    List<StoredBatches.Row> rows = StoredBatches.withTarget(collector.dataFile(), "/v1/ingest");
                    assertEquals(20, rows.size());
                    assertEquals(20, rows.stream().map(StoredBatches.Row::idempotencyKey).distinct().count());
                }
            }
        }
    }

    @Test
    void twoSendersKeysNeverShareABatchAndEachBatchCarriesItsSendersKey() throws Exception {
        Map<String, Set<String>> sendersByKey = new ConcurrentHashMap<>();
        spooled(relay -> {
            for (int i = 0; i < 30; i++) {
                String sender = i % 3 == 0 ? "alice" : i % 3 == 1 ? "bob" : "carol";
                post(relay, "/v1/ingest", event(sender + "-" + i), "Content-Type", "application/json",
                        "Authorization", "Bearer key-of-" + sender);
            }
        });
        {
            try (TestUpstream upstream = TestUpstream.start().capabilities(RelayBatch.CAPABILITY)
                    .answer(r -> {
                        List<byte[]> bodies = r.uri().equals(RelayBatch.PATH)
                                ? decode(r).stream().map(RelayBatch.Entry::body).toList() : List.of(r.body());
                        for (byte[] entry : bodies) {
                            String body = new String(entry, StandardCharsets.UTF_8);
                            sendersByKey.computeIfAbsent(r.header("Authorization"), k -> ConcurrentHashMap.newKeySet())
                                    .add(body.substring(body.indexOf("\"id\":\"") + 6, body.indexOf('-')));
                        }
                        return r.uri().equals(RelayBatch.PATH) ? allArchived(bodies.size())
                                : TestUpstream.Answer.status(202);
                    });
                 RunningRelay relay = relayTo(upstream.url().toString())) {
                await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
                assertEquals(Map.of("Bearer key-of-alice", Set.of("alice"), "Bearer key-of-bob", Set.of("bob"),
                        "Bearer key-of-carol", Set.of("carol")), sendersByKey);
                assertTrue(upstream.received().size() <= 3 * 4, "a batch per sender and lane at most: "
                        + upstream.received().size());
                // (a lane that took a single entry of a sender sends it alone, as it was received)
                assertTrue(upstream.received().stream().filter(r -> r.uri().equals(RelayBatch.PATH)).count() >= 3);
            }
        }
    }

    @Test
    void entriesABatchAnswersRetryablyMakeTheUpstreamWaitAndGoToTheNextUpstream() throws Exception {
        spooled(relay -> postKeyed(relay, "busy", 10));
        // A store that is busy: it takes each batch, and answers 503 for every entry in it.
        try (TestUpstream busy = TestUpstream.start().capabilities(RelayBatch.CAPABILITY)
                     .answer(r -> r.uri().equals(RelayBatch.PATH) ? eachAnswered(503, entriesIn(r))
                             : TestUpstream.Answer.status(503));
             TestUpstream next = TestUpstream.start();
             CapturedLog log = new CapturedLog();
             // One lane: it packs all ten in one batch. With several, a lane holding one entry sends it alone, and
             // its 503 can make the busy upstream wait before the batch of another lane is on its way.
             RunningRelay relay = RunningRelay.start(dir.resolve("relay"), Map.of("MCPD_UPSTREAMS",
                     busy.url() + "," + next.url(), "MCPD_WORKERS", "1"), TUNING)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(Set.of("busy-0", "busy-1", "busy-2", "busy-3", "busy-4", "busy-5", "busy-6", "busy-7",
                    "busy-8", "busy-9"), Set.copyOf(next.received().stream().map(r -> r.header("Idempotency-Key"))
                    .toList()), "every entry delivered by the next upstream");
            assertTrue(busy.received().stream().anyMatch(r -> r.uri().equals(RelayBatch.PATH)), "batches went first");
            // A wait is logged at the 1st, 2nd, 4th… failure in a row, so the batch's may show as the check it was.
            assertTrue(log.events("dev.mcpd.delivery", Level.WARN).stream().anyMatch(e -> e.getFormattedMessage()
                    .contains("order=1 ") && e.getFormattedMessage().contains("entries answered 503")),
                    "the busy upstream waits, as for a 503 to a single entry");
            JsonNode first = upstreamStatus(relay);
            // Lanes take entries side by side: some may reach the next upstream while the busy one waits.
            int askedOfBusy = busy.received().stream().mapToInt(r -> r.uri().equals(RelayBatch.PATH) ? entriesIn(r) : 1)
                    .sum();
            assertEquals(askedOfBusy, first.get("failedAttempts").asInt(),
                    "each entry answered 503 a failed attempt: " + first);
            assertEquals(0, first.get("delivered").asInt(), first.toString());
        }
    }

    @Test
    void aLoneCompressibleEntryCrossesGzippedAsABatchOfOneAndIsStoredAsItsSenderSentIt() throws Exception {
        byte[] compressible = ("{\"events\":[" + "{\"name\":\"checkout\",\"status\":\"ok\"},".repeat(60)
                + "{\"name\":\"last\"}]}").getBytes(StandardCharsets.UTF_8);
        byte[] small = event("small");
        try (RunningCollector collector = RunningCollector.start(dir.resolve("collector"));
             TestUpstream front = TestUpstream.start().capabilities(RelayBatch.CAPABILITY)
                     .answer(r -> Forward.to(URI.create(collector.baseUrl()), r));
             RunningRelay relay = relayTo(front.url().toString())) {
            await().atMost(PATIENCE).until(() -> upstreamStatus(relay).get("batches").asBoolean());
            assertEquals(202, post(relay, "/v1/ingest", compressible, "Content-Type", "application/json",
                    "Idempotency-Key", "lone-big"));
            await().atMost(PATIENCE).until(() -> StoredBatches.withKey(collector.dataFile(), "lone-big").isPresent());
            TestUpstream.Received crossed = front.received().get(0);
            assertEquals(RelayBatch.PATH, crossed.uri());
            assertEquals("gzip", crossed.header("Content-Encoding"));
            assertTrue(crossed.body().length < compressible.length * 9L / 10, crossed.body().length
                    + " bytes crossed for a body of " + compressible.length);
            StoredBatches.Row row = StoredBatches.withKey(collector.dataFile(), "lone-big").orElseThrow();
            assertArrayEquals(compressible, row.body(), "the collector keeps the bytes the sender sent");
            assertEquals("", row.contentEncoding(), "with the encoding the sender gave them: none");
            assertEquals("/v1/ingest", row.target());

            // Too small to gain from compression: it goes as it came.
            assertEquals(202, post(relay, "/v1/ingest", small, "Content-Type", "application/json",
                    "Idempotency-Key", "lone-small"));
            await().atMost(PATIENCE).until(() -> StoredBatches.withKey(collector.dataFile(), "lone-small").isPresent());
            assertArrayEquals(small, StoredBatches.withKey(collector.dataFile(), "lone-small").orElseThrow().body());
            assertEquals("/v1/ingest", front.received().get(1).uri(), "a small entry goes as it came");
        }
    }

    private static TestUpstream.Answer eachAnswered(int status, int entries) {
        StringBuilder answer = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < entries; i++) {
            answer.append(i == 0 ? "" : ",").append("{\"status\":").append(status)
                    .append(",\"reason\":\"busy\"}");
        }
        return TestUpstream.Answer.ok().withHeader("Content-Type", "application/json").withBody(answer + "]}");
    }

    static List<RelayBatch.Entry> decode(TestUpstream.Received r) {
        try {
            return RelayBatch.decode(r.body(), Optional.ofNullable(r.header("Content-Encoding")).orElse(""),
                    Long.MAX_VALUE);
        } catch (RelayBatch.Malformed | RelayBatch.TooLarge e) {
            throw new AssertionError(e);
        }
    }

    private static int entriesIn(TestUpstream.Received r) {
        return decode(r).size();
    }

    static TestUpstream.Answer allArchived(int entries) {
        StringBuilder answer = new StringBuilder("{\"entries\":[");
        for (int i = 0; i < entries; i++) {
            answer.append(i == 0 ? "" : ",").append("{\"status\":200,\"accepted\":1,\"duplicate\":0,\"rejected\":0}");
        }
        return TestUpstream.Answer.ok().withHeader("Content-Type", "application/json").withBody(answer + "]}");
    }
}
