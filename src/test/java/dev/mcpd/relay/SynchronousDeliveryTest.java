package dev.mcpd.relay;

import static dev.mcpd.testing.GrpcClient.framed;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.RunningCollector;
import dev.mcpd.testing.GrpcClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sender that adds {@code mcpd-relay-wait: DURATION} is answered, after its request is durable as
 * always, with its fate — the upstream's own answer when delivered, its refusal when dead-lettered — or, when the
 * time is up first, the ordinary spooled answer; a malformed value is a 400 and nothing is written.
 */
class SynchronousDeliveryTest {

    @TempDir
    Path dir;

    static HttpResponse<String> post(RunningRelay relay, String path, String contentType, String body, String wait)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri(path)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (wait != null) {
            request.header("mcpd-relay-wait", wait);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String batch(int events) {
        StringBuilder json = new StringBuilder("{\"events\":[");
        for (int i = 0; i < events; i++) {
            json.append(i == 0 ? "" : ",").append("{\"id\":\"").append(UUID.randomUUID()).append("\"}");
        }
        return json.append("]}").toString();
    }

    @Test
    void deliveredToMcpdServeTheSenderGetsTheCollectorsOwnCounts(@TempDir Path collectorDir) throws Exception {
        try (RunningCollector collector = RunningCollector.start(collectorDir);
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", collector.baseUrl()),
                     DeliveryTest.FAST)) {
            // mcpd serve takes relay batches: each entry's answer is its own outcome within the batch's answer
            await().atMost(PATIENCE).until(() -> relay.application().upstreams().views().get(0).traffic().batches());
            String body = batch(3);
            HttpResponse<String> answer = post(relay, "/v1/ingest", "application/json", body, "10s");
            assertEquals(200, answer.statusCode(), answer.body());
            assertEquals("delivered", answer.headers().firstValue("mcpd-relay").orElseThrow());
            assertEquals("{\"accepted\":3,\"duplicate\":0,\"rejected\":0}", answer.body());
            assertTrue(answer.headers().firstValue("mcpd-relay-seq").isPresent());
            assertEquals(relay.application().spool().id(), answer.headers().firstValue("mcpd-relay-id").orElseThrow());

            HttpResponse<String> again = post(relay, "/v1/ingest", "application/json", body, "10s");
            assertEquals("{\"accepted\":0,\"duplicate\":3,\"rejected\":0}", again.body(),
                    "the same bytes again: the collector's real answer, a duplicate");

            HttpResponse<String> otlp = post(relay, "/v1/logs", "application/json", "{\"resourceLogs\":[]}", "10s");
            assertEquals(200, otlp.statusCode());
            assertEquals("delivered", otlp.headers().firstValue("mcpd-relay").orElseThrow());
            assertEquals("{\"partialSuccess\":{}}", otlp.body());
        }
    }

    @Test
    void deliveredAloneTheSenderGetsTheUpstreamsStatusTypeAndBody() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(201)
                .withHeader("Content-Type", "application/x-counts").withBody("accepted=7"));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            HttpResponse<String> answer = post(relay, "/v1/ingest", "application/json", batch(1), "10s");
            assertEquals(201, answer.statusCode());
            assertEquals("application/x-counts", answer.headers().firstValue("Content-Type").orElseThrow());
            assertEquals("accepted=7", answer.body());
            assertEquals("delivered", answer.headers().firstValue("mcpd-relay").orElseThrow());
        }
    }

    @Test
    void deadLetteredTheSenderGetsTheRefusalAndTheEntryIsInDead() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(400)
                .withHeader("Content-Type", "text/plain").withBody("events[0] has no id"));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream);
             GrpcClient grpc = new GrpcClient(relay.port())) {
            HttpResponse<String> answer = post(relay, "/v1/ingest", "application/json", batch(1), "10s");
            assertEquals(400, answer.statusCode());
            assertEquals("dead-lettered", answer.headers().firstValue("mcpd-relay").orElseThrow());
            assertEquals("events[0] has no id", answer.body());
            assertEquals(1, relay.application().deadLetters().count());

            GrpcClient.Reply call = grpc.call(GrpcClient.TRACES, Map.of("mcpd-relay-wait", "10s"),
                    framed("refused message".getBytes(StandardCharsets.UTF_8)));
            assertEquals(3, call.grpcStatus(), "the upstream's 400 as INVALID_ARGUMENT: " + call.grpcMessage());
            assertEquals("events[0] has no id", call.grpcMessage());
            assertEquals("dead-lettered", call.headers().get("mcpd-relay"));
        }
    }

    @Test
    void aGrpcCallThatWaitsGetsTheUpstreamsResponseMessage() throws Exception {
        byte[] partialSuccess = {0x0a, 0x02, 0x08, 0x02}; // ExportTraceServiceResponse{partial_success{rejected_spans: 2}}
        try (TestUpstream upstream = TestUpstream.start().answer(r -> new TestUpstream.Answer(200,
                Map.of("Content-Type", "application/x-protobuf"), partialSuccess, Duration.ZERO));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream);
             GrpcClient grpc = new GrpcClient(relay.port())) {
            GrpcClient.Reply call = grpc.call(GrpcClient.TRACES, Map.of("mcpd-relay-wait", "10s"),
                    framed("spans".getBytes(StandardCharsets.UTF_8)));
            assertEquals(0, call.grpcStatus());
            assertEquals("delivered", call.headers().get("mcpd-relay"));
            assertArrayEquals(framed(partialSuccess), call.body(), "the upstream's own response, with its real count");
        }
    }

    @Test
    void whenTheTimeIsUpTheOrdinaryAnswerComesAndTheEntryIsDeliveredLater() throws Exception {
        TestUpstream gone = TestUpstream.start();
        int port = gone.port();
        gone.close();
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", "http://127.0.0.1:" + port),
                DeliveryTest.FAST)) {
            String body = batch(1);
            HttpResponse<String> answer = post(relay, "/v1/ingest", "application/json", body, "300ms");
            assertEquals(202, answer.statusCode());
            assertEquals("spooled", answer.headers().firstValue("mcpd-relay").orElseThrow());
            assertEquals(1, relay.spooled().size(), "durable all the same");
            try (TestUpstream back = TestUpstream.start(port)) {
                await().atMost(PATIENCE).until(() -> back.received().stream()
                        .anyMatch(r -> new String(r.body(), StandardCharsets.UTF_8).equals(body)));
            }
        }
    }

    @Test
    void aStopAnswersEveryWaitingSenderAtOnceWithTheOrdinaryAnswer() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503))) {
            RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream);
            CompletableFuture<HttpResponse<String>> waiter;
            try {
                waiter = CompletableFuture.supplyAsync(() -> {
                    try {
                        return post(relay, "/v1/ingest", "application/json", batch(1), "60s");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                await().atMost(PATIENCE).until(() -> relay.spooled().size() == 1 && !upstream.received().isEmpty());
            } finally {
                relay.closePromptly(); // not the caller's 60 s
            }
            HttpResponse<String> answer = waiter.get(5, TimeUnit.SECONDS);
            assertEquals(202, answer.statusCode(), answer.body());
            assertEquals("spooled", answer.headers().firstValue("mcpd-relay").orElseThrow());
        }
    }

    @Test
    void aMalformedWaitIs400AndNothingIsWritten() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            for (String wait : new String[] {"soon", "61s", "-1s", "10", "1.5s"}) {
                HttpResponse<String> answer = post(relay, "/v1/ingest", "application/json", batch(1), wait);
                assertEquals(400, answer.statusCode(), wait + ": " + answer.body());
                assertTrue(answer.body().contains("mcpd-relay-wait"), answer.body());
            }
            assertEquals(0, relay.spooled().size());
        }
    }
}
