package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.testing.DocExample;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GET /relay/status shows every upstream's state, the spool and the workers. */
class RelayStatusTest {


    @TempDir
    Path dir;

    private static JsonNode status(RunningRelay relay) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode());
        assertEquals("application/json", answer.headers().firstValue("content-type").orElseThrow());
        return new ObjectMapper().readTree(answer.body());
    }

    @Test
    void aWaitingUpstreamIsShownWithItsRetryAfterAndWhy() throws Exception {
        try (TestUpstream primary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503)
                     .withHeader("Retry-After", "120"));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS",
                     primary.url() + "," + secondary.url()), DeliveryTest.FAST)) {
            Instant before = Instant.now();
            HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(), HttpResponse.BodyHandlers.discarding());
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            JsonNode first = status(relay).get("upstreams").get(0);
            assertEquals(primary.url().toString(), first.get("url").asText());
            assertEquals(1, first.get("order").asInt());
            assertEquals("waiting", first.get("state").asText());
            Instant until = Instant.parse(first.get("waitingUntil").asText());
            assertTrue(!until.isBefore(before.plusSeconds(119)) && !until.isAfter(Instant.now().plusSeconds(121)),
                    "waits the 120 s it asked for: " + until);
            assertEquals("503", first.get("waitingBecause").asText());
            assertEquals(503, first.get("lastStatus").asInt());
            assertEquals(1, first.get("consecutiveFailures").asInt());
            assertEquals(1, first.get("failedAttempts").asInt());
            assertTrue(first.get("lastLatencyMs").asLong() >= 0);
            JsonNode second = status(relay).get("upstreams").get(1);
            assertEquals("up", second.get("state").asText());
            assertEquals(1, second.get("delivered").asInt());
        }
    }

    @Test
    void requestsInFlightAndWorkersWaitingForAPlaceInTheWindowAreShown() throws Exception {
        try (TestUpstream slow = TestUpstream.start()
                     .answer(r -> TestUpstream.Answer.ok().after(Duration.ofMillis(700)));
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", slow.url().toString(),
                     "MCPD_WORKERS", "2", "MCPD_MAX_IN_FLIGHT", "2"), DeliveryTest.FAST)) {
            for (int i = 0; i < 6; i++) {
                HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).POST(HttpRequest.BodyPublishers.ofString(
                        "{\"n\":" + i + "}")).build(), HttpResponse.BodyHandlers.discarding());
            }
            await().atMost(PATIENCE).until(() -> slow.received().size() >= 2);
            await("two in flight and one in each worker's hand").atMost(PATIENCE)
                    .until(() -> status(relay).get("spool").get("outForDelivery").asInt() == 4);
            JsonNode status = status(relay);
            JsonNode upstream = status.get("upstreams").get(0);
            assertEquals(2, upstream.get("inFlight").asInt(), "a window of two, full");
            assertEquals(2, upstream.get("window").asInt());
            JsonNode workers = status.get("workers");
            assertEquals(2, workers.get("busy").asInt(), "both workers hold an entry, waiting for a place");
            assertEquals(0, workers.get("idle").asInt());
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            JsonNode after = status(relay);
            assertEquals(0, after.get("workers").get("busy").asInt(), "idle once the spool is empty");
            assertEquals(0, after.get("upstreams").get(0).get("inFlight").asInt());
            assertEquals(0, after.get("spool").get("outForDelivery").asInt());
            assertEquals("h1", after.get("upstreams").get(0).get("protocol").asText(), "a plain HTTP/1.1 upstream");
        }
    }

    @Test
    void theSpoolAndTheWorkersAreShown() throws Exception {
        try (TestUpstream down = TestUpstream.refusing();
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", down.url().toString(),
                "MCPD_SPOOL_MAX_BYTES", "1MiB", "MCPD_WORKERS", "3"), DeliveryTest.FAST)) {
            for (int i = 0; i < 2; i++) {
                HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).POST(HttpRequest.BodyPublishers.ofString(
                        "{\"n\":" + i + "}")).build(), HttpResponse.BodyHandlers.discarding());
            }
            long bytes = relay.application().spool().bytes();
            JsonNode status = status(relay);
            JsonNode spool = status.get("spool");
            assertEquals(2, spool.get("entries").asInt());
            assertEquals(bytes, spool.get("bytes").asLong(), "the spool's bytes, read just before");
            assertEquals(1024 * 1024, spool.get("maxBytes").asLong());
            assertEquals(0, spool.get("deadLetters").asInt());
            assertTrue(spool.get("oldestSeconds").asLong() >= 0);
            assertEquals(relay.spoolDir().toString(), spool.get("directory").asText());
            JsonNode workers = status.get("workers");
            assertEquals(3, workers.get("total").asInt());
            String state = status.get("upstreams").get(0).get("state").asText();
            assertTrue(state.equals("waiting") || state.equals("down"), "an unreachable upstream is not up: " + state);
        }
    }

    /** Every field's path in {@code node}, in order ({@code checks.mode}); arrays are left to the caller. */
    private static List<String> fields(JsonNode node, String prefix) {
        List<String> paths = new ArrayList<>();
        node.fields().forEachRemaining(field -> {
            paths.add(prefix + field.getKey());
            if (field.getValue().isObject()) {
                paths.addAll(fields(field.getValue(), prefix + field.getKey() + "."));
            }
        });
        return paths;
    }

    private static JsonNode upstreamIn(JsonNode status, String state) {
        for (JsonNode upstream : status.get("upstreams")) {
            if (upstream.get("state").asText().equals(state)) {
                return upstream;
            }
        }
        throw new AssertionError("no upstream is " + state + ": " + status);
    }

    @Test
    void theMonitoringPagesSampleHasTheFieldsOfTheLiveAnswer() throws Exception {
        JsonNode sample = new ObjectMapper().readTree(DocExample.block(Path.of("docs/monitoring.md"), "relay-status"));
        // One probe each at start and none after, so the last check of the waiting one is its refused delivery.
        RelayApplication.Tuning oneProbe = DeliveryTest.FAST.withProbes(Duration.ofHours(1), Duration.ofSeconds(30));
        try (TestUpstream primary = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503)
                     .withHeader("Retry-After", "120"));
             TestUpstream secondary = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS",
                     primary.url() + "," + secondary.url()), oneProbe)) {
            await("both probed").atMost(PATIENCE).until(() -> {
                JsonNode upstreams = status(relay).get("upstreams");
                return upstreams.get(0).has("lastCheck") && upstreams.get(1).has("lastCheck");
            });
            HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(), HttpResponse.BodyHandlers.discarding());
            await().atMost(PATIENCE).until(() -> secondary.received().size() == 1);
            JsonNode live = status(relay);
            for (JsonNode shown : sample.get("upstreams")) {
                String state = shown.get("state").asText();
                assertEquals(fields(shown, ""), fields(upstreamIn(live, state), ""), "an upstream " + state);
            }
            for (String section : List.of("spool", "deadLetters", "sync", "workers")) {
                assertEquals(fields(sample.get(section), ""), fields(live.get(section), ""), section);
            }
            List<String> shownSections = new ArrayList<>();
            sample.fieldNames().forEachRemaining(shownSections::add);
            List<String> liveSections = new ArrayList<>();
            live.fieldNames().forEachRemaining(liveSections::add);
            assertEquals(shownSections, liveSections);
        }
    }
}
