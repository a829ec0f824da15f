package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.wire.RelayBatch;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sender's headers receivers need — a tenant's {@code X-Scope-OrgID}, Prometheus's
 * {@code X-Prometheus-Remote-Write-Version} — are kept with each entry and reach the upstream with it: on a single
 * request, inside a relay batch per entry, on a merged OTLP request; entries of two tenants never share a request. A
 * value that could not be sent as received is refused with 400 before anything is kept.
 */
class ForwardedHeadersTest {

    private static final RelayApplication.Tuning TUNING = RelayBatchDeliveryTest.TUNING;

    @TempDir
    Path dir;

    private static byte[] event(String id) {
        return RelayBatchDeliveryTest.event(id);
    }

    private static String idOf(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        int at = text.indexOf("\"id\":\"") + 6;
        return text.substring(at, text.indexOf('"', at));
    }

    /** Spools what {@code posts} sends, with no upstream to deliver it to, and stops that relay. */
    private void spooled(RelayBatchDeliveryTest.Posts posts) throws Exception {
        try (RunningRelay down = RunningRelay.start(dir.resolve("relay"), Map.of(), TUNING)) {
            posts.to(down);
        }
    }

    @Test
    void theForwardedHeadersReachTheUpstreamWithTheirEntryAndNoOtherHeaderDoes() throws Exception {
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir.resolve("relay"), Map.of("MCPD_UPSTREAMS",
                     upstream.url().toString()), TUNING)) {
            assertEquals(202, post(relay, "/v1/ingest", event("a"), "Content-Type", "application/json",
                    "X-Scope-OrgID", "tenant-a", "X-Prometheus-Remote-Write-Version", "0.1.0", "X-Other", "kept?"));
            assertEquals(202, post(relay, "/v1/ingest", event("none"), "Content-Type", "application/json"));
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 2);
            Map<String, TestUpstream.Received> byId = new ConcurrentHashMap<>();
            upstream.received().forEach(r -> byId.put(idOf(r.body()), r));
            assertEquals("tenant-a", byId.get("a").header("X-Scope-OrgID"));
            assertEquals("0.1.0", byId.get("a").header("X-Prometheus-Remote-Write-Version"));
            assertNull(byId.get("a").header("X-Other"), "only the headers --forward-header names");
            assertNull(byId.get("none").header("X-Scope-OrgID"));
        }
    }

    @Test
    void withForwardHeaderNoneNoSenderHeaderIsForwarded() throws Exception {
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir.resolve("relay"), Map.of("MCPD_UPSTREAMS",
                     upstream.url().toString(), "MCPD_FORWARD_HEADERS", "none"), TUNING)) {
            assertEquals(202, post(relay, "/v1/ingest", event("a"), "Content-Type", "application/json",
                    "X-Scope-OrgID", "tenant-a"));
            await().atMost(PATIENCE).until(() -> upstream.received().size() == 1);
            assertNull(upstream.received().get(0).header("X-Scope-OrgID"));
        }
    }

    @Test
    void twoTenantsNeverShareARelayBatchAndEachEntryCarriesItsTenant() throws Exception {
        spooled(relay -> {
            for (int i = 0; i < 30; i++) {
                String tenant = "tenant-" + (char) ('a' + i % 3);
                assertEquals(202, post(relay, "/v1/ingest", event(tenant + "/" + i), "Content-Type",
                        "application/json", "X-Scope-OrgID", tenant));
            }
        });
        Map<String, Set<String>> tenantsByRequest = new ConcurrentHashMap<>();
        try (TestUpstream upstream = TestUpstream.start().capabilities(RelayBatch.CAPABILITY).answer(r -> {
            if (!r.uri().equals(RelayBatch.PATH)) {
                tenantsByRequest.computeIfAbsent("single:" + idOf(r.body()), k -> ConcurrentHashMap.newKeySet())
                        .add(r.header("X-Scope-OrgID") + "=" + idOf(r.body()).split("/")[0]);
                return TestUpstream.Answer.status(202);
            }
            List<RelayBatch.Entry> entries = RelayBatchDeliveryTest.decode(r);
            for (RelayBatch.Entry entry : entries) {
                tenantsByRequest.computeIfAbsent("batch:" + r.at() + ":" + r.header("X-Scope-OrgID"),
                        k -> ConcurrentHashMap.newKeySet()).add(entry.headers().get("X-Scope-OrgID") + "="
                        + idOf(entry.body()).split("/")[0]);
            }
            return RelayBatchDeliveryTest.allArchived(entries.size());
        });
             RunningRelay relay = RunningRelay.start(dir.resolve("relay"), Map.of("MCPD_UPSTREAMS",
                     upstream.url().toString()), TUNING)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
        }
        assertTrue(tenantsByRequest.keySet().stream().anyMatch(k -> k.startsWith("batch:")), "batches went out");
        tenantsByRequest.forEach((request, tenants) -> {
            assertEquals(1, tenants.size(), request + " carried " + tenants);
            String only = tenants.iterator().next();
            assertEquals(only.split("=")[1], only.split("=")[0], request + ": each entry with its own tenant");
            if (request.startsWith("batch:")) {
                assertTrue(request.endsWith(":" + only.split("=")[1]), request + ": the batch names its tenant");
            }
        });
    }

    @Test
    void twoTenantsOtlpExportsAreMergedApartEachWithItsTenant() throws Exception {
        spooled(relay -> {
            for (int i = 0; i < 12; i++) {
                String tenant = i % 2 == 0 ? "tenant-a" : "tenant-b";
                String spans = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"tenant\",\"value\":"
                        + "{\"stringValue\":\"" + tenant + "\"}}]},\"scopeSpans\":[]}]}";
                assertEquals(200, post(relay, "/v1/traces", spans.getBytes(StandardCharsets.UTF_8), "Content-Type",
                        "application/json", "X-Scope-OrgID", tenant));
            }
        });
        Map<String, Set<String>> resourcesByTenantHeader = new ConcurrentHashMap<>();
        try (TestUpstream upstream = TestUpstream.start().answer(r -> {
            String body;
            try {
                body = new String("gzip".equals(r.header("Content-Encoding")) ? OtlpTelemetry.gunzip(r.body())
                        : r.body(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            Set<String> seen = resourcesByTenantHeader.computeIfAbsent(r.header("X-Scope-OrgID"),
                    k -> ConcurrentHashMap.newKeySet());
            for (String tenant : List.of("tenant-a", "tenant-b")) {
                if (body.contains("\"" + tenant + "\"")) {
                    seen.add(tenant);
                }
            }
            return TestUpstream.Answer.ok();
        });
             RunningRelay relay = RunningRelay.start(dir.resolve("relay"), Map.of("MCPD_UPSTREAMS",
                     upstream.url().toString()), TUNING)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertTrue(upstream.received().size() < 12, "the exports travelled merged: " + upstream.received().size());
        }
        assertEquals(Map.of("tenant-a", Set.of("tenant-a"), "tenant-b", Set.of("tenant-b")), resourcesByTenantHeader);
    }

    @Test
    void aValueTooLongOrWithAControlCharacterIsRefused400AndNothingIsKept() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir.resolve("relay"), Map.of(), TUNING)) {
            HttpResponse<String> tooLong = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                    .header("X-Scope-OrgID", "t".repeat(1025)).POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(400, tooLong.statusCode());
            assertEquals("the X-Scope-OrgID header is longer than 1024 bytes: it is kept with the entry and sent"
                    + " upstream, and kept values are bounded", tooLong.body().strip());
            try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
                String answer = raw.send("POST /v1/ingest HTTP/1.1\r\nHost: x\r\nX-Scope-OrgID: a\u0001b\r\n"
                        + "Content-Length: 2\r\n\r\n{}").readResponse();
                assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
            }
            assertTrue(relay.spooled().isEmpty(), "nothing of either was kept");
        }
    }
}
