package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/2 where the upstream speaks it, HTTP/1.1 where it does not: an upstream that is not mcpd (it says nothing in
 * its probe answer) and accepts the probe's h2c upgrade gets every delivery over HTTP/2; one that speaks only
 * HTTP/1.1 gets every delivery all the same, over HTTP/1.1.
 */
class DeliveryProtocolTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Probes every 200 ms, so the relay knows what the upstream speaks at once. */
    private static final RelayApplication.Tuning TUNING = DeliveryTest.FAST.withProbes(Duration.ofMillis(200),
            Duration.ofSeconds(30));
    private static final int ENTRIES = 30;

    @TempDir
    Path dir;

    /** A Vert.x server answering 200 to everything, which records the HTTP version of each POST it took. */
    static final class VersionRecordingUpstream implements AutoCloseable {
        final Vertx vertx = Vertx.vertx();
        final List<HttpVersion> posts = new CopyOnWriteArrayList<>();
        final HttpServer server;

        VersionRecordingUpstream(boolean http2) throws Exception {
            server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0)
                            .setHttp2ClearTextEnabled(http2))
                    .requestHandler(request -> request.body().onSuccess(body -> {
                        if (request.method() == HttpMethod.POST) {
                            posts.add(request.version());
                        }
                        request.response().setStatusCode(200).end();
                    }))
                    .listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + server.actualPort());
        }

        @Override
        public void close() throws Exception {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private JsonNode deliverTo(VersionRecordingUpstream upstream) throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", upstream.url().toString()),
                TUNING)) {
            for (int i = 0; i < ENTRIES; i++) {
                assertEquals(2, post(relay, "/v1/ingest", ("{\"events\":[{\"n\":" + i + "}]}")
                        .getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json") / 100);
            }
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            return JSON.readTree(HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("upstreams").get(0);
        }
    }

    @Test
    void anUpstreamThatTakesTheH2cUpgradeGetsEveryDeliveryOverHttp2() throws Exception {
        try (VersionRecordingUpstream upstream = new VersionRecordingUpstream(true)) {
            JsonNode status = deliverTo(upstream);

            assertEquals(ENTRIES, upstream.posts.size(), "every entry, one request each");
            assertEquals(Set.of(HttpVersion.HTTP_2), Set.copyOf(upstream.posts));
            assertEquals("h2", status.get("protocol").asText());
            assertFalse(status.get("batches").asBoolean(), "not an mcpd collector: no batches");
        }
    }

    @Test
    void anUpstreamThatSpeaksOnlyHttp11GetsEveryDeliveryOverHttp11() throws Exception {
        try (VersionRecordingUpstream upstream = new VersionRecordingUpstream(false)) {
            JsonNode status = deliverTo(upstream);

            assertEquals(ENTRIES, upstream.posts.size(), "every entry, one request each");
            assertEquals(Set.of(HttpVersion.HTTP_1_1), Set.copyOf(upstream.posts));
            assertEquals("h1", status.get("protocol").asText());
        }
    }
}
