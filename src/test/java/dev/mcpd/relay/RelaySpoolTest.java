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
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GET /relay/spool: each entry's failed attempts and last failure, kept only while the entry is in the spool. */
class RelaySpoolTest {

    @TempDir
    Path dir;

    private static HttpResponse<String> get(RunningRelay relay, String pathAndQuery) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(pathAndQuery)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode spool(RunningRelay relay) throws Exception {
        HttpResponse<String> answer = get(relay, "/relay/spool?limit=5");
        assertEquals(200, answer.statusCode(), answer.body());
        assertEquals("application/json", answer.headers().firstValue("content-type").orElseThrow());
        return new ObjectMapper().readTree(answer.body());
    }

    private static void ingest(RunningRelay relay, String target, String body) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri(target))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), answer.body());
    }

    @Test
    void anEntryThatFailedIsListedWithItsAttemptsAndLastFailureAndForgottenOnceDelivered() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            ingest(relay, "/v1/ingest?tenant=a", "{\"n\":1}");
            await().atMost(PATIENCE).until(() -> spool(relay).get("entries").size() == 1
                    && spool(relay).get("entries").get(0).get("attempts").asInt() >= 2);
            JsonNode status = spool(relay);
            assertEquals(1, status.get("waiting").asLong());
            assertEquals(relay.application().spool().id(), status.get("relay").asText());
            JsonNode entry = status.get("entries").get(0);
            assertEquals(1, entry.get("seq").asLong());
            assertEquals("POST", entry.get("method").asText());
            assertEquals("/v1/ingest?tenant=a", entry.get("target").asText());
            assertEquals(7, entry.get("bytes").asLong());
            assertEquals("upstream=" + upstream.url() + " 503", entry.get("lastFailure").asText());
            assertTrue(entry.get("ageSeconds").asLong() >= 0, entry.toString());

            upstream.answer(r -> TestUpstream.Answer.ok());
            await().atMost(PATIENCE).until(() -> spool(relay).get("waiting").asLong() == 0);
            JsonNode after = spool(relay);
            assertEquals(0, after.get("entries").size(), after.toString());
            assertEquals(0, after.get("recorded").asInt(), "a delivered entry's record is gone: " + after);
        }
    }

    @Test
    void aLimitThatIsNotAWholeNumberFromOneIsA400AndOtherRelayPagesStay404() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            for (String limit : new String[] {"0", "-1", "x", "10001", "1&limit=2"}) {
                HttpResponse<String> answer = get(relay, "/relay/spool?limit=" + limit);
                assertEquals(400, answer.statusCode(), limit);
                assertEquals("limit must be given once, a whole number from 1 to 10000\n", answer.body());
            }
            assertEquals(200, get(relay, "/relay/spool").statusCode());
            assertEquals(404, get(relay, "/relay/spools").statusCode());
            assertEquals(404, get(relay, "/relay/spool/1").statusCode());
        }
    }
}
