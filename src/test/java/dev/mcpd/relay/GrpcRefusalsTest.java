package dev.mcpd.relay;

import static dev.mcpd.testing.GrpcClient.framed;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import com.google.rpc.Status;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.GrpcClient;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.OtlpTelemetry.Grpc;
import dev.mcpd.upstream.Backoff;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * OTLP/gRPC's refusals, each with nothing written: a missing or wrong key is {@code UNAUTHENTICATED} (checked first),
 * a message over {@code --max-body-bytes} {@code RESOURCE_EXHAUSTED}, a full spool {@code UNAVAILABLE} with a
 * {@code RetryInfo} of 5 s — which the SDK's exporter retries until it is taken.
 */
class GrpcRefusalsTest {

    static final String KEY = "grpc-sender-key";
    static final int MAX_BODY = 1024;
    static final OtlpTelemetry TELEMETRY = new OtlpTelemetry("mcpd-relay-grpc-refusals", "dev.mcpd.relay.grpc");

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay(Map.of("MCPD_INGEST_KEY", KEY,
            "MCPD_MAX_BODY_BYTES", Integer.toString(MAX_BODY)));


    static byte[] message(int bytes, char fill) {
        byte[] message = new byte[bytes];
        Arrays.fill(message, (byte) fill);
        return message;
    }

    static boolean spooled(RunningRelay on, byte[] body) {
        return on.spooled().stream().anyMatch(e -> Arrays.equals(body, e.request().body()));
    }

    @Test
    void withoutTheKeyACallIsUnauthenticatedAndNothingIsWritten() {
        byte[] message = message(100, 'a');
        GrpcClient.Reply none = relay.grpc().call(GrpcClient.TRACES, Map.of(), framed(message));
        GrpcClient.Reply wrong = relay.grpc().call(GrpcClient.TRACES, Map.of("authorization", "Bearer not-" + KEY),
                framed(message));
        assertEquals(16, none.grpcStatus(), "UNAUTHENTICATED");
        assertEquals(16, wrong.grpcStatus());
        assertFalse(none.grpcMessage().contains(KEY));
        assertFalse(spooled(relay.running(), message));

        CompletableResultCode export = Grpc.exportSpans("http://127.0.0.1:" + relay.port(), "none", Map.of(),
                TELEMETRY.spans("span without a key"), 10);
        assertFalse(export.isSuccess(), "the SDK reports the refusal");
    }

    @Test
    void theKeyAsBearerMetadataOrXMcpdKeyIsTakenAndPassedOnWithTheEntry() {
        CompletableResultCode export = Grpc.exportSpans("http://127.0.0.1:" + relay.port(), "none",
                Map.of("authorization", "Bearer " + KEY), TELEMETRY.spans("span with its key"), 10);
        assertTrue(export.isSuccess(), "failure: " + export.getFailureThrowable());
        SpoolEntry entry = relay.spooled().stream()
                .filter(e -> OtlpTelemetry.contains(e.request().body(), "span with its key")).findFirst()
                .orElseThrow();
        assertEquals(Optional.of(new Credential("authorization", "Bearer " + KEY)), entry.request().credential()
                .map(c -> new Credential(c.header().toLowerCase(Locale.ROOT), c.value())));

        byte[] message = message(10, 'x');
        assertEquals(0, relay.grpc().call(GrpcClient.LOGS, Map.of("x-mcpd-key", KEY), framed(message)).grpcStatus());
        assertTrue(spooled(relay.running(), message));
    }

    @Test
    void aMessageOverTheLimitIsResourceExhaustedAndOneAtTheLimitIsTaken() {
        byte[] atTheLimit = message(MAX_BODY, 'l');
        byte[] overIt = message(MAX_BODY + 1, 'o');
        Map<String, String> key = Map.of("x-mcpd-key", KEY);

        assertEquals(0, relay.grpc().call(GrpcClient.TRACES, key, framed(atTheLimit)).grpcStatus());
        GrpcClient.Reply refused = relay.grpc().call(GrpcClient.TRACES, key, framed(overIt));
        assertEquals(8, refused.grpcStatus(), "RESOURCE_EXHAUSTED: " + refused.grpcMessage());
        assertTrue(refused.grpcMessage().contains(Integer.toString(MAX_BODY)), refused.grpcMessage());
        assertTrue(spooled(relay.running(), atTheLimit));
        assertFalse(spooled(relay.running(), overIt));

        assertEquals(16, relay.grpc().call(GrpcClient.TRACES, Map.of(), framed(overIt)).grpcStatus(),
                "the key is checked before the size");
    }

    /** One connection, as an SDK's channel: calls taken and refused in turn, each answered, none left hanging. */
    @Test
    void manyCallsOnOneConnectionTakenAndRefusedInTurnAreEachAnswered() {
        Map<String, String> key = Map.of("x-mcpd-key", KEY);
        byte[] atTheLimit = framed(message(MAX_BODY, 't'));
        byte[] overIt = framed(message(MAX_BODY + 1, 'u'));
        for (int i = 0; i < 500; i++) {
            assertEquals(0, relay.grpc().call(GrpcClient.TRACES, key, atTheLimit).grpcStatus(), "taken, call " + i);
            assertEquals(8, relay.grpc().call(GrpcClient.TRACES, key, overIt).grpcStatus(), "too large, call " + i);
            assertEquals(16, relay.grpc().call(GrpcClient.TRACES, Map.of(), overIt).grpcStatus(), "no key, call " + i);
        }
    }

    @Test
    void aMessageThatDoesNotArriveInTimeIsDeadlineExceeded(@TempDir Path dir) {
        try (RunningRelay slow = RunningRelay.start(dir, Map.of("MCPD_REQUEST_TIMEOUT_SECONDS", "1"));
             GrpcClient client = new GrpcClient(slow.port())) {
            GrpcClient.Reply reply = client.callStalled(GrpcClient.TRACES, new byte[] {0, 0, 0, 0, 100, 1, 2});
            assertEquals(4, reply.grpcStatus(), "DEADLINE_EXCEEDED: " + reply.grpcMessage());
            assertEquals(0, slow.spooled().size());
        }
    }

    // ---- a full spool ----

    static final RelayApplication.Tuning FAST = new RelayApplication.Tuning(
            new Backoff(Duration.ofMillis(100), Duration.ofMillis(500), Math::random), Duration.ofSeconds(5),
            Duration.ofSeconds(30), Map.of());

    @Test
    void aFullSpoolIsUnavailableWithRetryInfoAndTheExporterRetriesUntilItIsTaken(@TempDir Path dir) throws Exception {
        TestUpstream gone = TestUpstream.start();
        int upstreamPort = gone.port();
        gone.close();
        try (RunningRelay full = RunningRelay.start(dir, Map.of("MCPD_SPOOL_MAX_BYTES", "8192",
                "MCPD_UPSTREAMS", "http://127.0.0.1:" + upstreamPort), FAST);
             GrpcClient client = new GrpcClient(full.port())) {
            for (int i = 0; i < 100; i++) {
                HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(full.uri("/v1/ingest"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"fill\":" + i + ",\"pad\":\"" + "p".repeat(900)
                                + "\"}")).build(), HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 503) {
                    break;
                }
            }
            byte[] message = message(1000, 'f');
            GrpcClient.Reply refused = client.call(GrpcClient.TRACES, Map.of(), framed(message));
            assertEquals(14, refused.grpcStatus(), "UNAVAILABLE: " + refused.grpcMessage());
            assertFalse(spooled(full, message));
            byte[] details = refused.statusDetails();
            assertNotNull(details, "grpc-status-details-bin");
            Status status = Status.parseFrom(details);
            assertEquals(14, status.getCode());
            assertEquals(refused.grpcMessage(), status.getMessage());
            assertEquals(1, status.getDetailsCount());
            RetryInfo retryInfo = status.getDetails(0).unpack(RetryInfo.class);
            assertEquals(5, retryInfo.getRetryDelay().getSeconds(), "come back in 5 s");

            long refusedBefore = full.application().spool().refusedFull();
            // larger than whatever room the fill left (a ~930-byte post was the first refused)
            var spans = TELEMETRY.spans("span held while the spool was full",
                    span -> span.setAttribute("pad", "p".repeat(2_000)));
            CompletableFuture<CompletableResultCode> export = CompletableFuture.supplyAsync(() -> Grpc.exportSpans(
                    "http://127.0.0.1:" + full.port(), "none", Map.of(), spans, 30));
            await().atMost(PATIENCE).until(() -> full.application().spool().refusedFull() > refusedBefore);
            try (TestUpstream back = TestUpstream.start(upstreamPort)) {
                CompletableResultCode result = export.get();
                assertTrue(result.isSuccess(), "retried and taken; failure: " + result.getFailureThrowable());
                await().atMost(PATIENCE).until(() -> back.received().stream()
                        .anyMatch(r -> OtlpTelemetry.contains(r.body(), "span held while the spool was full")));
                var delivered = back.received().stream()
                        .filter(r -> OtlpTelemetry.contains(r.body(), "span held while the spool was full"))
                        .findFirst().orElseThrow();
                assertEquals("/v1/traces", delivered.uri());
                assertEquals("application/x-protobuf", delivered.header("Content-Type"));
            }
        }
    }
}
