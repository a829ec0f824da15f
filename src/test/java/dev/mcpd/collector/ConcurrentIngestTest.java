package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.collector.CollectorHttp.Counts;
import dev.mcpd.collector.CollectorHttp.Stats;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Under concurrency: copies of one keyed batch racing each other are stored once (the store's unique
 * key decides), and distinct batches sent at once are all stored — none lost to SQLite's single writer.
 */
class ConcurrentIngestTest {

    static final int SENDERS = 24;

    @TempDir
    Path dir;

    /** Posts {@link #SENDERS} batches to {@code /v1/ingest} at once, the i-th {@code batch(i)}; their answers. */
    private static List<HttpResponse<String>> postAtOnce(RunningCollector collector, IntFunction<String> batch)
            throws Exception {
        List<HttpRequest> requests = IntStream.range(0, SENDERS)
                .mapToObj(i -> postJson(collector.uri("/v1/ingest"), batch.apply(i)).build()).toList();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (HttpRequest request : requests) {
            answers.add(HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
        }
        List<HttpResponse<String>> done = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> answer : answers) {
            done.add(answer.get(30, TimeUnit.SECONDS));
        }
        return done;
    }

    @Test
    void copiesOfOneKeyedBatchSentAtOnceAreStoredOnceAndTheOthersAreDuplicates() throws Exception {
        try (RunningCollector collector = RunningCollector.start(dir)) {
            List<HttpResponse<String>> answers = postAtOnce(collector,
                    i -> "{\"idempotency_key\":\"raced\",\"events\":[{\"a\":1},{\"b\":2}]}");

            List<Counts> counts = answers.stream().map(a -> {
                assertEquals(200, a.statusCode(), a::body);
                return CollectorHttp.counts(a.body());
            }).toList();
            assertEquals(1, counts.stream().filter(c -> c.equals(new Counts(2, 0, 0))).count(), counts::toString);
            assertEquals(SENDERS - 1, counts.stream().filter(c -> c.equals(new Counts(0, 2, 0))).count(),
                    counts::toString);
            assertEquals(new Stats(1, 2, 2L * (SENDERS - 1)), stats(collector));
        }
    }

    @Test
    void distinctBatchesSentAtOnceAreAllStored() throws Exception {
        try (RunningCollector collector = RunningCollector.start(dir)) {
            List<HttpResponse<String>> answers = postAtOnce(collector,
                    i -> "{\"idempotency_key\":\"batch-" + i + "\",\"events\":[{\"n\":" + i + "}]}");

            for (HttpResponse<String> answer : answers) {
                assertEquals(200, answer.statusCode(), answer::body);
                assertEquals(new Counts(1, 0, 0), CollectorHttp.counts(answer.body()));
            }
            assertEquals(new Stats(SENDERS, SENDERS, 0), stats(collector));
        }
    }
}
