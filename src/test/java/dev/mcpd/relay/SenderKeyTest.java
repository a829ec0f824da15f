package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** With --ingest-key, a sender presents it as a Bearer token or in x-mcpd-key, or gets 401. */
class SenderKeyTest {

    static final String KEY = "k3y-for-senders";

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay(Map.of("MCPD_INGEST_KEY", KEY));



    /** Posts a unique body with the given header (or none); returns the status and whether it was spooled. */
    private static int post(String header, String value, boolean[] spooled) throws Exception {
        String body = "{\"id\":\"" + UUID.randomUUID() + "\"}";
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (header != null) {
            request.header(header, value);
        }
        HttpResponse<String> answer = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        spooled[0] = relay.spooled().stream().anyMatch(e -> new String(e.request().body()).equals(body));
        return answer.statusCode();
    }

    @Test
    void aRequestWithoutAKeyIsRefused401AndNothingIsWritten() throws Exception {
        boolean[] spooled = new boolean[1];
        assertEquals(401, post(null, null, spooled));
        assertFalse(spooled[0]);
    }

    @Test
    void aWrongKeyIsRefused401InEitherHeader() throws Exception {
        boolean[] spooled = new boolean[1];
        assertEquals(401, post("Authorization", "Bearer not-" + KEY, spooled));
        assertFalse(spooled[0]);
        assertEquals(401, post("x-mcpd-key", KEY + "x", spooled));
        assertFalse(spooled[0]);
        assertEquals(401, post("Authorization", KEY, spooled), "the key without the Bearer scheme");
        assertFalse(spooled[0]);
    }

    @Test
    void theKeyAsABearerTokenIsAccepted() throws Exception {
        boolean[] spooled = new boolean[1];
        assertEquals(202, post("Authorization", "Bearer " + KEY, spooled));
        assertEquals(true, spooled[0]);
    }

    @Test
    void theKeyInXMcpdKeyIsAccepted() throws Exception {
        boolean[] spooled = new boolean[1];
        assertEquals(202, post("x-mcpd-key", KEY, spooled));
        assertEquals(true, spooled[0]);
    }

    @Test
    void theRefusalNamesNoKey() throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .header("Authorization", "Bearer guess-" + KEY).POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(401, answer.statusCode());
        assertFalse(answer.body().contains(KEY));
        assertEquals(1, answer.body().strip().lines().count(), "one line: " + answer.body());
    }
}
