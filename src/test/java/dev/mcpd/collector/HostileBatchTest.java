package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.get;
import static dev.mcpd.collector.CollectorHttp.ingest;
import static dev.mcpd.collector.CollectorHttp.post;
import static dev.mcpd.collector.CollectorHttp.send;
import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.testing.GzipBomb;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12, defects 3 and 4: JSON built to hurt a parser, and gzip built to explode, are malformed or too large
 * batches — a 400 or 413 with one line, never a 503 a relay would retry for ever, nor a heap the collector cannot
 * fill — and the collector goes on taking batches.
 */
class HostileBatchTest {

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector();

    private static String repeat(String text, int times) {
        return text.repeat(times);
    }

    private static HttpResponse<String> postNative(byte[] body, String contentEncoding) {
        var request = post(collector.uri("/v1/ingest"), "application/json", body);
        if (contentEncoding != null) {
            request.header("Content-Encoding", contentEncoding);
        }
        return send(request);
    }

    private static boolean oneLine(HttpResponse<String> answer) {
        return answer.body().endsWith("\n") && answer.body().indexOf('\n') == answer.body().length() - 1
                && !answer.body().contains("Exception") && answer.body().length() < 400;
    }

    private static void assertStillTakesBatches() {
        var counts = ingest(collector, post(collector.uri("/v1/ingest"), "application/json",
                "{\"events\":[{\"after\":\"hostile\"}]}".getBytes(StandardCharsets.UTF_8)));
        assertEquals(1, counts.accepted());
        assertEquals(200, get(collector.uri("/readyz")).statusCode());
    }

    @Test
    void jsonBuiltToHurtTheParserIsAMalformedBatch() {
        Map<String, String> hostile = new LinkedHashMap<>();
        hostile.put("100 000 nested [", "{\"events\":[" + repeat("[", 100_000) + repeat("]", 100_000) + "]}");
        hostile.put("100 000 nested {", "{\"events\":[" + repeat("{\"a\":", 100_000) + "1" + repeat("}", 100_000)
                + "]}");
        hostile.put("a 5 000-digit number", "{\"events\":[{\"n\":" + repeat("9", 5_000) + "}]}");
        hostile.put("a 100 000-character field name", "{\"events\":[{\"" + repeat("k", 100_000) + "\":1}]}");
        hostile.put("a 5 000-digit number outside the events", "{\"x\":" + repeat("7", 5_000) + ",\"events\":[]}");
        var before = stats(collector);
        List<String> observed = new ArrayList<>();
        boolean all = true;
        for (Map.Entry<String, String> input : hostile.entrySet()) {
            HttpResponse<String> answer = postNative(input.getValue().getBytes(StandardCharsets.UTF_8), null);
            observed.add(input.getKey() + " → " + answer.statusCode() + " " + answer.body().strip());
            all &= answer.statusCode() == 400 && oneLine(answer);
        }
        boolean nothingStored = stats(collector).equals(before);
        assertHostile("j1", "native batches with " + String.join(", ", hostile.keySet()),
                "400 each with one line; nothing stored", String.join("; ", observed)
                        + (nothingStored ? "; nothing stored" : "; STORED"), all && nothingStored);
        assertStillTakesBatches();
    }

    @Test
    void concurrentGzipBombsAreRefused413AsSoonAsTheyInflatePastTheLimit() throws Exception {
        byte[] bomb = GzipBomb.ofEmptyObjects(64L << 20);
        var before = stats(collector);
        ExecutorService senders = Executors.newFixedThreadPool(4);
        List<Future<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answers.add(senders.submit(() -> postNative(bomb, "gzip")));
        }
        List<String> observed = new ArrayList<>();
        boolean all = true;
        for (Future<HttpResponse<String>> answer : answers) {
            HttpResponse<String> got = answer.get();
            observed.add(got.statusCode() + " " + got.body().strip());
            all &= got.statusCode() == 413 && oneLine(got);
        }
        senders.shutdown();
        boolean nothingStored = stats(collector).equals(before);
        assertHostile("j2", "4 concurrent " + (bomb.length >> 10) + " KiB gzip native batches, each inflating to"
                        + " 64 MiB of {} (--max-body-bytes 16 MiB)",
                "413 each with one line, as soon as inflation passes 16 MiB; nothing stored; the collector healthy",
                String.join("; ", observed) + (nothingStored ? "; nothing stored" : "; STORED"), all && nothingStored);
        assertStillTakesBatches();
    }

    @Test
    void aBatchOfAMillionEmptyObjectsIsCountedWithoutAnObjectTreeOfThem() throws Exception {
        // 3 MiB of "{}," inflates within the limit: it is counted by streaming, a counter, not a tree of a million.
        byte[] body = GzipBomb.ofEmptyObjects(3L << 20);
        HttpResponse<String> answer = postNative(body, "gzip");
        assertEquals(200, answer.statusCode(), answer.body());
        // 16 blocks of "{}," (3 MiB), then a last "{}".
        assertEquals(16 * GzipBomb.OBJECTS_PER_BLOCK + 1, CollectorHttp.counts(answer.body()).accepted());
    }
}
