package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What the relay answers, and that the answer comes with the request in the spool. */
class IngestAnswersTest {

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay();



    static HttpResponse<byte[]> post(String path, String contentType, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(path)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static Optional<SpoolEntry> spooledWithBody(byte[] body) {
        return relay.spooled().stream().filter(e -> Arrays.equals(e.request().body(), body)).findFirst();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/traces", "/v1/logs", "/v1/metrics"})
    void otlpProtobufIsAnsweredWithAnEmptyProtobufPartialSuccess(String path) throws Exception {
        byte[] body = ("protobuf bytes for " + path).getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> answer = post(path, "application/x-protobuf", body);
        assertEquals(200, answer.statusCode(), path);
        assertEquals("application/x-protobuf", answer.headers().firstValue("content-type").orElseThrow());
        assertEquals(0, answer.body().length);
        assertTrue(spooledWithBody(body).isPresent(), "in the spool when answered: " + path);
    }

    @Test
    void otlpJsonIsAnsweredWithAJsonPartialSuccess() throws Exception {
        byte[] body = "{\"resourceSpans\":[]}".getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> answer = post("/v1/traces", "application/json", body);
        assertEquals(200, answer.statusCode());
        assertEquals("application/json", answer.headers().firstValue("content-type").orElseThrow());
        assertEquals("{\"partialSuccess\":{}}", new String(answer.body(), StandardCharsets.UTF_8));
        assertTrue(spooledWithBody(body).isPresent());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/ingest", "/anything/else?tenant=a", "/"})
    void everyOtherPathIsAnswered202SpooledWithZeroCounts(String path) throws Exception {
        byte[] body = ("{\"events\":[{\"path\":\"" + path + "\"}]}").getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> answer = post(path, "application/json", body);
        assertEquals(202, answer.statusCode(), path);
        assertEquals("spooled", answer.headers().firstValue("mcpd-relay").orElseThrow());
        assertEquals("{\"accepted\":0,\"duplicate\":0,\"rejected\":0}",
                new String(answer.body(), StandardCharsets.UTF_8));
        SpoolEntry entry = spooledWithBody(body).orElseThrow();
        assertEquals(path, entry.request().target());
        assertEquals("POST", entry.request().method());
        assertEquals("application/json", entry.request().contentType());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/healthz", "/readyz", "/metrics", "/relay/status", "/relay"})
    void probeMetricsAndRelayPathsAreNotIngestAndRefusePost(String path) throws Exception {
        byte[] body = ("not for " + path).getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> answer = post(path, "application/json", body);
        assertEquals(405, answer.statusCode(), path);
        assertFalse(spooledWithBody(body).isPresent(), path);
    }

    @Test
    void aGetOnAnIngestPathIsRefused405() throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(405, answer.statusCode());
        assertEquals("POST", answer.headers().firstValue("allow").orElseThrow());
        assertEquals("this method is not allowed here: use POST\n", answer.body());
    }

    @Test
    void theRootListsThePortsPagesAndAPageOfTheRelaysThatDoesNotExistIs404() throws Exception {
        HttpResponse<String> index = HTTP.send(HttpRequest.newBuilder(relay.uri("/")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, index.statusCode());
        assertEquals(RelayBeans.PATHS.index(), index.body());
        for (String page : List.of("/healthz", "/readyz", "/metrics", "/relay/status", "/relay/sync?seq=N")) {
            assertTrue(index.body().contains("  " + page + "\n"), index.body());
        }
        for (String missing : List.of("/relay", "/relay/", "/relay/foo")) {
            HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri(missing)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(404, answer.statusCode(), missing);
            assertEquals("no such page: GET / lists this port's pages\n", answer.body(), missing);
        }
    }

    @Test
    void healthzAnswers200() throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/healthz")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode());
        assertEquals("ok\n", answer.body());
    }

    @Test
    void nothingTheSenderSentIsEchoedInTheAnswer() throws Exception {
        HttpResponse<byte[]> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .header("Content-Type", "application/json").header("Authorization", "Bearer echo-me-not")
                .header("X-Custom", "echo-me-not").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(202, answer.statusCode());
        answer.headers().map().forEach((name, values) ->
                assertFalse(values.toString().contains("echo-me-not"), name + " echoes the request"));
    }

    @Test
    void theEntryKeepsContentTypeEncodingAndReceiveTime() throws Exception {
        byte[] body = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3};
        long before = System.currentTimeMillis();
        HttpResponse<byte[]> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/logs"))
                .header("Content-Type", "application/x-protobuf").header("Content-Encoding", "gzip")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, answer.statusCode());
        SpoolEntry entry = spooledWithBody(body).orElseThrow();
        assertEquals("gzip", entry.request().contentEncoding());
        assertEquals("application/x-protobuf", entry.request().contentType());
        assertArrayEquals(body, entry.request().body(), "stored as received, never decompressed");
        assertTrue(entry.request().receivedAtMillis() >= before - 1000
                && entry.request().receivedAtMillis() <= System.currentTimeMillis());
    }
}
