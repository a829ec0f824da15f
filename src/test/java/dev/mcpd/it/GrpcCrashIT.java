package dev.mcpd.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.mcpd.relay.TestUpstream;
import dev.mcpd.testing.OtlpTelemetry;
import dev.mcpd.testing.OtlpTelemetry.Grpc;
import dev.mcpd.testing.TestTuning;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OTLP/gRPC with the durable-accept promise: an {@code OK} to a gRPC export is a promise like a 2xx. The packaged relay, its
 * upstream down, takes OTLP/gRPC span exports from the SDK's exporter on several threads and is killed with SIGKILL
 * while more are in flight; restarted on the same spool with its upstream up, it delivers every export that was
 * answered {@code OK}, as OTLP/HTTP.
 */
class GrpcCrashIT {

    static final int EXPORTS = 60;
    static final int SENDERS = 6;
    static final int KILL_AFTER_OKS = 25;
    static final OtlpTelemetry TELEMETRY = new OtlpTelemetry("mcpd-grpc-crash", "dev.mcpd.it.grpc");

    @TempDir
    Path tmp;

    @Test
    void everyExportAnsweredOkBeforeAKill9IsDeliveredAfterTheRestart() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        int port = PackagedJar.freePort();
        TestUpstream upstream = TestUpstream.start();
        int upstreamPort = upstream.port();
        upstream.close(); // down while the exports are taken
        List<String> args = List.of("relay", "--listen", "127.0.0.1:" + port, "--data",
                data.resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:" + upstreamPort);

        Set<String> answeredOk = ConcurrentHashMap.newKeySet();
        CountDownLatch enough = new CountDownLatch(KILL_AFTER_OKS);
        AtomicInteger next = new AtomicInteger();
        AtomicBoolean killed = new AtomicBoolean();
        ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
        try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), args.toArray(String[]::new))) {
            for (int t = 0; t < SENDERS; t++) {
                senders.submit(() -> {
                    for (int i = next.getAndIncrement(); i < EXPORTS && !killed.get(); i = next.getAndIncrement()) {
                        String name = "grpc crash span " + i;
                        CompletableResultCode result = Grpc.exportSpans("http://127.0.0.1:" + port, i % 2 == 0
                                ? "none" : "gzip", Map.of(), TELEMETRY.spans(name), 5);
                        if (result.isSuccess()) {
                            answeredOk.add(name);
                            enough.countDown();
                        }
                    }
                });
            }
            if (!enough.await(60, TimeUnit.SECONDS)) {
                fail("only " + answeredOk.size() + " exports answered OK in 60 s; relay log:\n" + relay.logTail(30));
            }
            relay.kill9();
            killed.set(true); // the exports in flight end (failing); no new one starts
        } finally {
            senders.shutdown();
            assertTrue(senders.awaitTermination(60, TimeUnit.SECONDS), "senders done after the kill");
        }
        Set<String> promised = Set.copyOf(answeredOk);
        assertTrue(promised.size() >= KILL_AFTER_OKS, "answered OK before the kill: " + promised.size());
        assertTrue(promised.size() < EXPORTS, "the kill landed while exports were still to come");

        try (TestUpstream back = TestUpstream.start(upstreamPort);
             PackagedJar restarted = PackagedJar.start(tmp, port, Map.of(), args.toArray(String[]::new))) {
            await().atMost(TestTuning.PATIENCE).until(() -> promised.stream().allMatch(name -> back.received()
                    .stream().anyMatch(r -> carries(r, name))));
            for (TestUpstream.Received delivered : back.received()) {
                assertEquals("/v1/traces", delivered.uri());
                assertEquals("application/x-protobuf", delivered.header("Content-Type"));
            }
            assertTrue(restarted.isAlive());
        }
    }

    /** Whether the delivered request carries the span's name (gunzipped when it came compressed). */
    private static boolean carries(TestUpstream.Received request, String name) {
        try {
            byte[] body = "gzip".equals(request.header("Content-Encoding")) ? OtlpTelemetry.gunzip(request.body())
                    : request.body();
            return OtlpTelemetry.contains(body, name);
        } catch (IOException e) {
            return false;
        }
    }
}
