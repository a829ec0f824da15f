package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.testing.TestCertificates;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemKeyCertOptions;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
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
 * HTTP/1.1 gets every delivery all the same, over HTTP/1.1; over TLS, what the upstream offers by ALPN, as the health
 * check (on the deliveries' own client stack and trust) found it.
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

        private final boolean tls;

        VersionRecordingUpstream(boolean http2) throws Exception {
            this(new HttpServerOptions().setHttp2ClearTextEnabled(http2), false);
        }

        /** Over TLS with this certificate, offering h2 by ALPN when {@code http2}, else HTTP/1.1 alone. */
        VersionRecordingUpstream(TestCertificates.Pair certificate, boolean http2) throws Exception {
            this(new HttpServerOptions().setSsl(true).setUseAlpn(true)
                    .setAlpnVersions(http2 ? List.of(HttpVersion.HTTP_2, HttpVersion.HTTP_1_1)
                            : List.of(HttpVersion.HTTP_1_1))
                    .setKeyCertOptions(new PemKeyCertOptions().setCertPath(certificate.cert().toString())
                            .setKeyPath(certificate.key().toString())), true);
        }

        private VersionRecordingUpstream(HttpServerOptions options, boolean tls) throws Exception {
            this.tls = tls;
            server = vertx.createHttpServer(options.setHost("127.0.0.1").setPort(0))
                    .requestHandler(request -> request.body().onSuccess(body -> {
                        if (request.method() == HttpMethod.POST) {
                            posts.add(request.version());
                        }
                        request.response().setStatusCode(200).end();
                    }))
                    .listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }

        URI url() {
            return URI.create((tls ? "https" : "http") + "://127.0.0.1:" + server.actualPort());
        }

        @Override
        public void close() throws Exception {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private JsonNode deliverTo(VersionRecordingUpstream upstream) throws Exception {
        return deliverTo(upstream, Map.of());
    }

    private JsonNode deliverTo(VersionRecordingUpstream upstream, Map<String, String> options) throws Exception {
        Map<String, String> environment = new HashMap<>(options);
        environment.put("MCPD_UPSTREAMS", upstream.url().toString());
        try (RunningRelay relay = RunningRelay.start(dir, environment, TUNING)) {
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

    /**
     * Over TLS the health check and the deliveries share one client stack and the same --upstream-ca: the h2 the
     * check's ALPN found is what the deliveries get, and an upstream that offers only HTTP/1.1 by ALPN gets HTTP/1.1.
     */
    @Test
    void anHttpsUpstreamGetsWhatItsAlpnOffersAsTheCheckFoundIt() throws Exception {
        assumeTrue(TestCertificates.available(), "openssl is not on the PATH (.ci/run installs it)");
        TestCertificates authority = TestCertificates.authority(dir.resolve("pki"), "upstreams");
        TestCertificates.Pair certificate = authority.server("upstream", "upstream.internal");
        Map<String, String> trusting = Map.of("MCPD_UPSTREAM_CA", authority.caCert.toString());
        try (VersionRecordingUpstream h2 = new VersionRecordingUpstream(certificate, true)) {
            JsonNode status = deliverTo(h2, trusting);
            assertEquals(ENTRIES, h2.posts.size(), "every entry, one request each");
            assertEquals(Set.of(HttpVersion.HTTP_2), Set.copyOf(h2.posts));
            assertEquals("h2", status.get("protocol").asText());
            assertEquals("success", status.get("lastCheck").get("result").asText(), status.toString());
        }
        try (VersionRecordingUpstream h1 = new VersionRecordingUpstream(certificate, false)) {
            JsonNode status = deliverTo(h1, trusting);
            assertEquals(Set.of(HttpVersion.HTTP_1_1), Set.copyOf(h1.posts));
            assertEquals("h1", status.get("protocol").asText());
            assertEquals("success", status.get("lastCheck").get("result").asText(), status.toString());
        }
    }
}
