package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.collector.RunningCollector;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolReceipt;
import dev.mcpd.spool.SpoolRequest;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relay restarted on a spool of a million waiting entries (made with the spool's own API) serves at once — a start
 * reads only the segments it must — and delivers every entry once.
 */
class LargeBacklogRestartTest {

    private static final int ENTRIES = 1_000_000;

    @TempDir
    Path dir;

    @Test
    void aMillionWaitingEntriesAreServedBesideAndDeliveredEachOnce(@TempDir Path collectorDir) throws Exception {
        Path spoolDir = dir.resolve("mcpd.spool").resolve("relay");
        try (Spool spool = Spool.open(spoolDir)) {
            List<CompletableFuture<SpoolReceipt>> written = new ArrayList<>();
            for (int i = 0; i < ENTRIES; i++) {
                written.add(spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "backlog-" + i,
                        Optional.empty(), System.currentTimeMillis(),
                        ("{\"events\":[{\"i\":" + i + "}]}").getBytes(StandardCharsets.UTF_8))));
                if (written.size() == 4096) {
                    CompletableFuture.allOf(written.toArray(CompletableFuture[]::new)).join();
                    written.clear();
                }
            }
            CompletableFuture.allOf(written.toArray(CompletableFuture[]::new)).join();
        }
        try (RunningCollector collector = RunningCollector.start(collectorDir);
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", collector.baseUrl()),
                     RelayApplication.Tuning.standard())) {
            HttpResponse<String> accepted = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "after-restart")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"events\":[{\"new\":true}]}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(202, accepted.statusCode(), "served beside the backlog");
            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> relay.application().spool().entries() == 0);
            String stats = HTTP.send(HttpRequest.newBuilder(collector.uri("/v1/stats")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertEquals("{\"batches\":" + (ENTRIES + 1) + ",\"events\":" + (ENTRIES + 1) + ",\"duplicates\":0,\"conflicts\":0}", stats,
                    "every entry archived once, none twice");
        }
    }
}
