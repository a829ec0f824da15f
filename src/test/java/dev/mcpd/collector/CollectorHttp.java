package dev.mcpd.collector;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Real HTTP/1.1 requests to a collector, and what its answers say. */
final class CollectorHttp {

    static final Duration TIMEOUT = Duration.ofSeconds(15);
    private static final ObjectMapper JSON = new ObjectMapper();

    private CollectorHttp() {
    }

    /** {@code GET /v1/stats}, which must answer 200 JSON. */
    record Stats(long batches, long events, long duplicates) {
    }

    /** The counts of a native batch's answer. */
    record Counts(int accepted, int duplicate, int rejected) {
    }

    static HttpRequest.Builder post(URI uri, String contentType, byte[] body) {
        return HttpRequest.newBuilder(uri).timeout(TIMEOUT).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    }

    static HttpRequest.Builder postJson(URI uri, String json) {
        return post(uri, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    static HttpResponse<String> send(HttpRequest.Builder request) {
        return send(request, HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<byte[]> sendForBytes(HttpRequest.Builder request) {
        return send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    private static <T> HttpResponse<T> send(HttpRequest.Builder request, HttpResponse.BodyHandler<T> bodyHandler) {
        try {
            return HTTP.send(request.build(), bodyHandler);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static HttpResponse<String> get(URI uri) {
        return send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET());
    }

    /** Posts a native batch and returns its answer, which must be 200 with counts. */
    static Counts ingest(RunningCollector collector, HttpRequest.Builder request) {
        HttpResponse<String> answer = send(request);
        assertEquals(200, answer.statusCode(), () -> "the batch is taken: " + answer.body());
        return counts(answer.body());
    }

    static Counts ingest(SharedCollector collector, HttpRequest.Builder request) {
        return ingest(collector.running(), request);
    }

    static Counts counts(String json) {
        JsonNode node = parse(json);
        assertEquals(3, node.size(), () -> "exactly accepted, duplicate, rejected: " + json);
        return new Counts(node.get("accepted").intValue(), node.get("duplicate").intValue(),
                node.get("rejected").intValue());
    }

    static Stats stats(RunningCollector collector) {
        HttpResponse<String> answer = get(collector.uri("/v1/stats"));
        assertEquals(200, answer.statusCode(), answer::body);
        JsonNode node = parse(answer.body());
        return new Stats(node.get("batches").longValue(), node.get("events").longValue(),
                node.get("duplicates").longValue());
    }

    static Stats stats(SharedCollector collector) {
        return stats(collector.running());
    }

    static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + json, e);
        }
    }
}
