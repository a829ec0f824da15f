package dev.mcpd.relay;

import static dev.mcpd.relay.DeliveryTest.post;
import static dev.mcpd.testing.OtlpTelemetry.gunzip;
import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.ReliabilityReport;
import io.opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * To an OTLP upstream that takes no relay batches — an OpenTelemetry Collector, whose OTLP receiver answers a GET with
 * 405 — waiting OTLP entries of one signal, content type and credential travel merged into one export request: every
 * span arrives once per delivery, a refused merge is split until the refused entry is found, a retryable failure
 * moves the whole merge, a partial success is counted and never sent again. Entries are spooled by a relay whose
 * upstream is down; a relay started on the same spool then finds them waiting.
 */
class OtlpMergeDeliveryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final RelayApplication.Tuning TUNING = DeliveryTest.FAST.withProbes(Duration.ofMillis(200),
            Duration.ofSeconds(30));

    @TempDir
    Path dir;

    /** An export request of one resource ({@code service}) with one span per name. */
    static ExportTraceServiceRequest traces(String service, String... spans) {
        ScopeSpans.Builder scope = ScopeSpans.newBuilder();
        for (String name : spans) {
            scope.addSpans(Span.newBuilder().setName(name).setTraceId(ByteString.copyFrom(new byte[16]))
                    .setSpanId(ByteString.copyFrom(new byte[8])));
        }
        return ExportTraceServiceRequest.newBuilder().addResourceSpans(ResourceSpans.newBuilder()
                .setResource(Resource.newBuilder().addAttributes(KeyValue.newBuilder().setKey("service.name")
                        .setValue(AnyValue.newBuilder().setStringValue(service))))
                .addScopeSpans(scope)).build();
    }

    /** The export request an upstream got, decoded as the Collector decodes it. */
    static ExportTraceServiceRequest exported(TestUpstream.Received r) {
        try {
            byte[] body = "gzip".equals(r.header("Content-Encoding")) ? gunzip(r.body()) : r.body();
            return ExportTraceServiceRequest.parseFrom(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> spanNames(ExportTraceServiceRequest request) {
        return request.getResourceSpansList().stream().flatMap(r -> r.getScopeSpansList().stream())
                .flatMap(s -> s.getSpansList().stream()).map(Span::getName).toList();
    }

    /** Span names of every request {@code upstream} answered 2xx, in arrival order. */
    static List<String> spansTaken(TestUpstream upstream, Set<TestUpstream.Received> refused) {
        return upstream.received().stream().filter(r -> r.uri().equals("/v1/traces") && !refused.contains(r))
                .flatMap(r -> spanNames(exported(r)).stream()).toList();
    }

    interface Posts {
        void to(RunningRelay relay) throws Exception;
    }

    private void spooled(Posts posts) throws Exception {
        try (RunningRelay down = RunningRelay.start(dir.resolve("relay"), Map.of(), TUNING)) {
            posts.to(down);
        }
    }

    private RunningRelay relayTo(String upstreams, String... options) {
        Map<String, String> environment = new HashMap<>(Map.of("MCPD_UPSTREAMS", upstreams));
        for (int i = 0; i < options.length; i += 2) {
            environment.put(options[i], options[i + 1]);
        }
        return RunningRelay.start(dir.resolve("relay"), environment, TUNING);
    }

    /** Posts {@code count} trace exports, span {@code <name><i>} each, every third gzip-compressed by its sender. */
    private static List<String> postTraces(RunningRelay relay, String name, int count, String... headers)
            throws Exception {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] body = traces("svc-" + name, name + i).toByteArray();
            List<String> all = new ArrayList<>(List.of("Content-Type", "application/x-protobuf", "Idempotency-Key",
                    name + "-" + i));
            all.addAll(List.of(headers));
            if (i % 3 == 0) {
                body = gzip(body);
                all.addAll(List.of("Content-Encoding", "gzip"));
            }
            assertEquals(200, post(relay, "/v1/traces", body, all.toArray(String[]::new)));
            names.add(name + i);
        }
        return names;
    }

    private static JsonNode upstreamStatus(RunningRelay relay, int order) throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(relay.uri("/relay/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body()).get("upstreams").get(order - 1);
    }

    private static TestUpstream collectorLike() {
        return TestUpstream.start().readyStatus(405);
    }

    @Test
    void waitingExportsOfOneSignalTravelMergedAndEverySpanArrivesOnce() throws Exception {
        List<String> sent = new ArrayList<>();
        List<String> logs = new ArrayList<>();
        spooled(relay -> {
            sent.addAll(postTraces(relay, "span", 60));
            sent.addAll(postTraces(relay, "other-tenant", 5, "x-mcpd-key", "tenant-b"));
            for (int i = 0; i < 10; i++) {
                String body = "{\"resourceLogs\":[{\"resource\":{},\"scopeLogs\":[{\"logRecords\":[{\"body\":"
                        + "{\"stringValue\":\"line " + i + "\"}}]}]}]}";
                assertEquals(200, post(relay, "/v1/logs", body.getBytes(StandardCharsets.UTF_8), "Content-Type",
                        "application/json", "Idempotency-Key", "log-" + i));
                logs.add("line " + i);
            }
            assertEquals(202, post(relay, "/v1/ingest", "{\"events\":[{}]}".getBytes(StandardCharsets.UTF_8),
                    "Content-Type", "application/json", "Idempotency-Key", "native"));
        });
        try (TestUpstream collector = collectorLike(); RunningRelay relay = relayTo(collector.url().toString())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            List<String> arrived = new ArrayList<>(spansTaken(collector, Set.of()));
            assertEquals(sent.stream().sorted().toList(), arrived.stream().sorted().toList(), "every span, once");

            List<TestUpstream.Received> traceRequests = collector.received().stream()
                    .filter(r -> r.uri().equals("/v1/traces")).toList();
            assertTrue(traceRequests.size() <= 10, traceRequests.size() + " requests carried 65 trace exports");
            for (TestUpstream.Received r : traceRequests) {
                List<String> names = spanNames(exported(r));
                boolean tenantB = names.get(0).startsWith("other-tenant");
                assertTrue(names.stream().allMatch(n -> n.startsWith("other-tenant") == tenantB),
                        "two senders' keys never share a request: " + names);
                assertEquals(tenantB ? "tenant-b" : null, r.header("x-mcpd-key"));
                assertEquals("application/x-protobuf", r.header("Content-Type"));
                if (names.size() > 1) {
                    assertTrue(r.header("Idempotency-Key").startsWith("relay-merge-"), r.header("Idempotency-Key"));
                }
            }
            assertTrue(traceRequests.stream().anyMatch(r -> "gzip".equals(r.header("Content-Encoding"))),
                    "a merge is gzipped when that saves bytes");

            List<TestUpstream.Received> logRequests = collector.received().stream()
                    .filter(r -> r.uri().equals("/v1/logs")).toList();
            List<String> logLines = new ArrayList<>();
            for (TestUpstream.Received r : logRequests) {
                byte[] body = "gzip".equals(r.header("Content-Encoding")) ? gunzip(r.body()) : r.body();
                for (JsonNode resource : JSON.readTree(body).get("resourceLogs")) {
                    logLines.add(resource.at("/scopeLogs/0/logRecords/0/body/stringValue").asText());
                }
            }
            assertEquals(logs, logLines.stream().sorted().toList(), "every log record, once");
            assertTrue(logRequests.size() < logs.size(), logRequests.size() + " requests for " + logs.size());
            assertEquals(1, collector.received().stream().filter(r -> r.uri().equals("/v1/ingest")).count(),
                    "what is not OTLP travels alone");
            assertEquals(76, upstreamStatus(relay, 1).get("delivered").asInt(), "delivered counts entries");
        }
    }

    @Test
    void aRefusedMergeIsSplitUntilTheRefusedEntryIsFoundAndOnlyItGoesToDead() throws Exception {
        List<String> sent = new ArrayList<>();
        spooled(relay -> {
            sent.addAll(postTraces(relay, "good", 20));
            assertEquals(200, post(relay, "/v1/traces", traces("svc", "poison").toByteArray(), "Content-Type",
                    "application/x-protobuf", "Idempotency-Key", "poison"));
            sent.addAll(postTraces(relay, "fine", 20));
        });
        Set<TestUpstream.Received> refused = ConcurrentHashMap.newKeySet();
        try (TestUpstream collector = collectorLike().answer(r -> {
                 if (spanNames(exported(r)).contains("poison")) {
                     refused.add(r);
                     return TestUpstream.Answer.status(400).withBody("span name not allowed");
                 }
                 return TestUpstream.Answer.ok();
             });
             RunningRelay relay = relayTo(collector.url().toString())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(sent.stream().sorted().toList(), spansTaken(collector, refused).stream().sorted().toList(),
                    "every other span delivered, once");
            List<DeadLetter> dead = relay.application().deadLetters().list();
            assertEquals(1, dead.size(), "only the refused entry is a dead letter");
            assertEquals("poison", dead.get(0).idempotencyKey());
            assertEquals(400, dead.get(0).status(), "with the status it got alone");
            assertTrue(dead.get(0).answer().contains("span name not allowed"), dead.get(0).toString());
            long requests = collector.received().size();
            assertTrue(requests <= 30, requests + " requests found one refused entry among 41");
        }
    }

    /** The tag of field 99, an unknown one, opening a group and closing it. */
    private static final byte[] OPEN_GROUP_99 = {(byte) 0x9b, 0x06};
    private static final byte[] CLOSE_GROUP_99 = {(byte) 0x9c, 0x06};

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] joined = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, joined, a.length, b.length);
        return joined;
    }

    @Test
    void exportsThatCannotBeJoinedSafelyTravelAloneAndHoldNothingUp() throws Exception {
        // One sender's export ends inside an open group, another's begins with its end tag: joined, every export
        // between them would become part of an unknown field. And a JSON export in UTF-16, which once stranded
        // every entry its lane had taken.
        byte[] opens = concat(traces("svc", "opens").toByteArray(), OPEN_GROUP_99);
        byte[] closes = concat(CLOSE_GROUP_99, traces("svc", "closes").toByteArray());
        byte[] utf16 = "{\"resourceSpans\":[{\"resource\":{}}]}".getBytes(StandardCharsets.UTF_16BE);
        List<String> sent = new ArrayList<>();
        spooled(relay -> {
            sent.addAll(postTraces(relay, "before", 5));
            assertEquals(200, post(relay, "/v1/traces", opens, "Content-Type", "application/x-protobuf",
                    "Idempotency-Key", "opens"));
            sent.addAll(postTraces(relay, "victim", 10));
            assertEquals(200, post(relay, "/v1/traces", closes, "Content-Type", "application/x-protobuf",
                    "Idempotency-Key", "closes"));
            assertEquals(200, post(relay, "/v1/traces", utf16, "Content-Type", "application/json",
                    "Idempotency-Key", "utf16"));
            sent.addAll(postTraces(relay, "after", 5));
        });
        try (TestUpstream collector = collectorLike(); RunningRelay relay = relayTo(collector.url().toString())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            List<String> arrived = new ArrayList<>();
            List<byte[]> alone = new ArrayList<>();
            for (TestUpstream.Received r : collector.received()) {
                byte[] body = "gzip".equals(r.header("Content-Encoding")) ? gunzip(r.body()) : r.body();
                if (!r.uri().equals("/v1/traces")) {
                    continue;
                }
                if (Arrays.equals(body, opens) || Arrays.equals(body, closes)
                        || Arrays.equals(body, utf16)) {
                    alone.add(body);
                } else {
                    arrived.addAll(spanNames(ExportTraceServiceRequest.parseFrom(body)));
                }
            }
            boolean everySpan = sent.stream().sorted().toList().equals(arrived.stream().sorted().toList());
            ReliabilityReport.assertHostile("a3-h1", "OTLP protobuf exports merged for an OTLP upstream: one ending"
                            + " inside an open group of an unknown field, 10 others, one beginning with that group's"
                            + " end tag; and a JSON export in UTF-16",
                    "the three travel alone, byte for byte; every span of the others arrives, once; delivery goes on",
                    arrived.size() + " of " + sent.size() + " spans of the others arrived"
                            + (everySpan ? ", each once" : ", NOT each once") + "; " + alone.size()
                            + " exports went alone; the spool emptied", everySpan && alone.size() == 3);
            assertTrue(collector.received().size() < sent.size(), "the others still travel merged: "
                    + collector.received().size() + " requests");
        }
    }

    @Test
    void aRetryableFailureMovesTheWholeMergeToTheNextUpstream() throws Exception {
        List<String> sent = new ArrayList<>();
        spooled(relay -> sent.addAll(postTraces(relay, "moved", 30)));
        try (TestUpstream busy = collectorLike().answer(r -> TestUpstream.Answer.status(503));
             TestUpstream next = collectorLike();
             RunningRelay relay = relayTo(busy.url() + "," + next.url())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(sent.stream().sorted().toList(), spansTaken(next, Set.of()).stream().sorted().toList());
            assertTrue(busy.received().stream().anyMatch(r -> spanNames(exported(r)).size() > 1),
                    "the first upstream got merges");
            assertTrue(next.received().size() < sent.size(), "the next one too: " + next.received().size());
        }
    }

    @Test
    void aMergeWhoseAnswerIsLostIsSentAgainWholeAndNothingIsLost() throws Exception {
        List<String> sent = new ArrayList<>();
        spooled(relay -> sent.addAll(postTraces(relay, "lost", 30)));
        AtomicReference<TestUpstream.Received> lost =
                new AtomicReference<>();
        try (TestUpstream collector = collectorLike().answer(r -> spanNames(exported(r)).size() > 1
                     && lost.compareAndSet(null, r) ? TestUpstream.Answer.lost() : TestUpstream.Answer.ok());
             RunningRelay relay = relayTo(collector.url().toString())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertTrue(lost.get() != null, "a merged request's answer was lost");
            List<String> answered = spansTaken(collector, Set.of(lost.get()));
            assertTrue(answered.containsAll(spanNames(exported(lost.get()))), "its spans were sent again");
            assertEquals(sent.stream().sorted().toList(), answered.stream().sorted().toList(),
                    "every span delivered once by the answered requests");
            assertEquals(0, relay.application().deadLetters().list().size());
        }
    }

    @Test
    void aPartialSuccessIsCountedByUpstreamAndSignalAndNeverSentAgain() throws Exception {
        spooled(relay -> postTraces(relay, "partly", 12));
        byte[] partial = ExportTraceServiceResponse.newBuilder().setPartialSuccess(ExportTracePartialSuccess
                .newBuilder().setRejectedSpans(1).setErrorMessage("1 span dropped:\ntoo old")).build().toByteArray();
        try (TestUpstream collector = collectorLike().answer(r -> TestUpstream.Answer.ok()
                     .withHeader("Content-Type", "application/x-protobuf").withBody(partial));
             CapturedLog log = new CapturedLog();
             RunningRelay relay = relayTo(collector.url().toString())) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            int requests = collector.received().size();
            assertEquals(12, spansTaken(collector, Set.of()).size(), "each span delivered once: none sent again");
            List<String> said = log.events("dev.mcpd.delivery", Level.WARN).stream()
                    .map(e -> e.getFormattedMessage()).filter(m -> m.contains("signal=traces rejected=1")).toList();
            assertEquals(1, said.size(), "logged once: the rest within 10 s are counted, not logged: " + said);
            assertTrue(said.get(0).contains("message=\"1 span dropped:\\x0atoo old\""),
                    "the upstream's text escaped, on one line: " + said.get(0));
            Scrape scrape = Scrape.of(HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertEquals(requests, scrape.value("mcpd_relay_upstream_rejected_items_total{order=\"1\",signal=\"traces\","
                    + "upstream=\"" + collector.url() + "\"}").orElseThrow(), 0.0, "one rejected per request");
            assertEquals(0, scrape.value("mcpd_relay_upstream_rejected_items_total{order=\"1\",signal=\"logs\","
                    + "upstream=\"" + collector.url() + "\"}").orElseThrow(), 0.0);
        }
    }

    @Test
    void withBatchMaxEntriesOneEachEntryTravelsAlone() throws Exception {
        spooled(relay -> postTraces(relay, "alone", 10));
        try (TestUpstream collector = collectorLike();
             RunningRelay relay = relayTo(collector.url().toString(), "MCPD_BATCH_MAX_ENTRIES", "1")) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            assertEquals(10, collector.received().size());
            Set<String> keys = collector.received().stream().map(r -> r.header("Idempotency-Key"))
                    .collect(Collectors.toSet());
            assertEquals(10, keys.size());
            assertTrue(keys.stream().allMatch(k -> k.startsWith("alone-")), keys.toString());
        }
    }
}
