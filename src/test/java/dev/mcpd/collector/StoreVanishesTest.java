package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.get;
import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.send;
import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, defect 6, for the collector: a SQLite file deleted (with its folder) under a running collector is not
 * archived into — a 200 there would be a batch gone at the next start — but refused with 503, with readiness saying
 * why; once the folder is back, the collector archives into a new database there.
 */
class StoreVanishesTest {

    @TempDir
    Path dir;

    @Test
    void aStoreFolderRemovedWhileRunningIsRefused503UntilItIsBack() throws Exception {
        Path folder = dir.resolve("store");
        try (RunningCollector collector = RunningCollector.startOn(folder.resolve("mcpd.db"), Map.of())) {
            assertEquals(200, send(postJson(collector.uri("/v1/ingest"), "{\"events\":[{\"n\":1}]}")).statusCode());
            try (Stream<Path> files = Files.walk(folder)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
            HttpResponse<String> refused = send(postJson(collector.uri("/v1/ingest"), "{\"events\":[{\"n\":2}]}"));
            HttpResponse<String> unready = get(collector.uri("/readyz"));
            Files.createDirectories(folder);
            await().atMost(Duration.ofSeconds(10)).until(() -> get(collector.uri("/readyz")).statusCode() == 200);
            HttpResponse<String> accepted = send(postJson(collector.uri("/v1/ingest"), "{\"events\":[{\"n\":3}]}"));
            boolean inTheNewFile = Files.exists(folder.resolve("mcpd.db")) && stats(collector).batches() == 1;
            assertHostile("s3", "rm -rf of the collector's SQLite folder under a running collector, then a batch;"
                            + " later mkdir",
                    "503 + Retry-After and /readyz 503 while it is gone; 200 again, archived in a new file, once it"
                            + " is back",
                    refused.statusCode() + " " + refused.body().strip() + "; /readyz " + unready.statusCode() + " "
                            + unready.body().strip() + "; after mkdir " + accepted.statusCode()
                            + (inTheNewFile ? ", in the new file" : ", NOT in the new file"),
                    refused.statusCode() == 503 && refused.headers().firstValue("Retry-After").isPresent()
                            && unready.statusCode() == 503 && accepted.statusCode() == 200 && inTheNewFile);
        }
    }
}
