package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The window of requests in flight to an upstream grows while answers come back in time, shrinks at once
 * on a 503 storm — the upstream sees fewer requests at once — and grows back when the upstream recovers.
 */
class DeliveryWindowTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static void post(RunningRelay relay, int count) {
        List<CompletableFuture<HttpResponse<Void>>> posts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] body = ("{\"events\":[{\"id\":\"" + UUID.randomUUID() + "\"}]}").getBytes(StandardCharsets.UTF_8);
            posts.add(HTTP.sendAsync(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.discarding()));
        }
        posts.forEach(post -> assertEquals(202, post.join().statusCode()));
    }

    private static JsonNode upstream(RunningRelay relay) throws Exception {
        String status = HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return JSON.readTree(status).get("upstreams").get(0);
    }

    @Test
    void aStormOf503sShrinksTheWindowAndItGrowsBackAfterwards() throws Exception {
        Duration answerTime = Duration.ofMillis(100);
        try (TestUpstream upstream = TestUpstream.start()
                     .answer(r -> TestUpstream.Answer.ok().after(answerTime));
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", upstream.url().toString()),
                     DeliveryTest.FAST)) {
            post(relay, 400);
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            int grown = upstream.takeMaxConcurrentRequests();
            assertTrue(grown > 16, "the window grew past its start of 16: " + grown);

            upstream.answer(r -> TestUpstream.Answer.status(503).after(answerTime));
            post(relay, 200);
            await("the window shrinks").atMost(PATIENCE).until(() -> upstream(relay).get("window").asInt() <= 2);
            upstream.takeMaxConcurrentRequests();
            int before = upstream.received().size();
            await().atMost(PATIENCE).until(() -> upstream.received().size() >= before + 10);
            int duringStorm = upstream.takeMaxConcurrentRequests();
            assertTrue(duringStorm <= 4, "the upstream sees few requests at once while it refuses: " + duringStorm);

            upstream.answer(r -> TestUpstream.Answer.ok().after(answerTime));
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            int regrown = upstream.takeMaxConcurrentRequests();
            assertTrue(regrown > 16, "the window grew back: " + regrown);
        }
    }
}
