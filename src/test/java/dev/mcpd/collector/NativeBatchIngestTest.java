package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.ingest;
import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.send;
import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.CollectorHttp.Counts;
import dev.mcpd.collector.CollectorHttp.Stats;
import dev.mcpd.collector.StoredBatches.Row;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The native batch on {@code POST /v1/ingest} against a real collector on SQLite — its counts, its
 * deduplication by idempotency key (body beats header), and its refusals.
 */
class NativeBatchIngestTest {

    /** Two JSON objects and one number: two accepted, one rejected. */
    static final String EVENTS = "[{\"name\":\"a\"},{\"name\":\"b\",\"n\":2},3]";

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector();

    private static String key() {
        return "test-" + UUID.randomUUID();
    }

    private static String batch(String events) {
        return "{\"events\":" + events + "}";
    }

    private static String keyedBatch(String key, String events) {
        return "{\"idempotency_key\":\"" + key + "\",\"events\":" + events + "}";
    }

    /** {@code POST /v1/ingest} of this JSON. */
    private static HttpRequest.Builder postToIngest(String json) {
        return postJson(collector.uri("/v1/ingest"), json);
    }

    /** A POST of an already gzip-compressed JSON body, sent with {@code Content-Encoding: gzip}. */
    private static HttpRequest.Builder postGzipped(URI uri, byte[] compressed) {
        return CollectorHttp.post(uri, "application/json", compressed).header("Content-Encoding", "gzip");
    }

    private static void assertOneLineRefusal(HttpResponse<String> answer, int status, String mentions) {
        assertEquals(status, answer.statusCode(), answer::body);
        assertTrue(answer.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"),
                () -> "a plain-text reason: " + answer.headers().map());
        String body = answer.body();
        assertTrue(body.endsWith("\n") && body.indexOf('\n') == body.length() - 1 && body.length() > 1,
                () -> "exactly one line: [" + body + "]");
        assertTrue(body.contains(mentions), () -> "the reason mentions \"" + mentions + "\": " + body);
    }

    /** Sends the request: refused with the status and a one-line reason, and the stats as they were. */
    private static void assertRefusedAndNothingStored(HttpRequest.Builder request, int status, String mentions) {
        Stats before = stats(collector);

        HttpResponse<String> answer = send(request);

        assertOneLineRefusal(answer, status, mentions);
        assertEquals(before, stats(collector));
    }

    @Test
    void aBatchOfTwoObjectsAndANumberIsAnswered200WithTwoAcceptedAndOneRejected() {
        HttpResponse<String> answer = send(postToIngest(batch(EVENTS)));

        assertEquals(200, answer.statusCode(), answer::body);
        assertTrue(answer.headers().firstValue("Content-Type").orElseThrow().startsWith("application/json"));
        assertEquals("{\"accepted\":2,\"duplicate\":0,\"rejected\":1}", answer.body());
    }

    @Test
    void anAcceptedBatchIsCountedInTheStatsAsOneBatchWithItsAcceptedEvents() {
        Stats before = stats(collector);

        ingest(collector, postToIngest(batch(EVENTS)));

        Stats after = stats(collector);
        assertEquals(new Stats(before.batches() + 1, before.events() + 2, before.duplicates()), after);
    }

    @Test
    void theSameBatchAgainWithTheSameKeyInTheBodyIsAllDuplicateAndStoresNothing() {
        String key = key();
        assertEquals(new Counts(2, 0, 1), ingest(collector, postToIngest(keyedBatch(key, EVENTS))));
        Stats before = stats(collector);

        Counts again = ingest(collector, postToIngest(keyedBatch(key, EVENTS)));

        assertEquals(new Counts(0, 3, 0), again);
        Stats after = stats(collector);
        assertEquals(before.batches(), after.batches(), "no batch stored");
        assertEquals(before.events(), after.events(), "no event stored");
        assertEquals(before.duplicates() + 3, after.duplicates(), "every entry of the copy counted as duplicate");
    }

    @Test
    void theSameBatchAgainWithTheSameIdempotencyKeyHeaderIsAllDuplicateAndStoresNothing() {
        String key = key();
        assertEquals(new Counts(2, 0, 1), ingest(collector, postToIngest(batch(EVENTS))
                .header("Idempotency-Key", key)));
        Stats before = stats(collector);

        Counts again = ingest(collector, postToIngest(batch(EVENTS)).header("Idempotency-Key", key));

        assertEquals(new Counts(0, 3, 0), again);
        Stats after = stats(collector);
        assertEquals(new Stats(before.batches(), before.events(), before.duplicates() + 3), after);
    }

    @Test
    void aKeyedBatchIsStoredOnceUnderItsKey() {
        String key = key();
        ingest(collector, postToIngest(keyedBatch(key, EVENTS)));
        ingest(collector, postToIngest(keyedBatch(key, EVENTS)));

        Row row = StoredBatches.withKey(collector.dataFile(), key).orElseThrow();
        assertEquals(2, row.events());
        assertEquals(1, row.rejected());
        assertEquals(keyedBatch(key, EVENTS), new String(row.body(), StandardCharsets.UTF_8));
    }

    @Test
    void theKeyInTheBodyBeatsTheIdempotencyKeyHeader() {
        String k1 = key();
        String k2 = key();
        assertEquals(new Counts(2, 0, 1), ingest(collector, postToIngest(keyedBatch(k1, EVENTS))
                .header("Idempotency-Key", k2)));

        Counts underK1 = ingest(collector, postToIngest(batch(EVENTS)).header("Idempotency-Key", k1));
        Counts underK2 = ingest(collector, postToIngest(batch(EVENTS)).header("Idempotency-Key", k2));

        assertEquals(new Counts(0, 3, 0), underK1, "the batch was recorded under the body's key");
        assertEquals(new Counts(2, 0, 1), underK2, "the header's key was not recorded");
    }

    @Test
    void batchesWithoutAnyKeyAreStoredEveryTime() {
        String target = "/v1/ingest?run=" + UUID.randomUUID();
        Stats before = stats(collector);

        Counts first = ingest(collector, postJson(collector.uri(target), batch(EVENTS)));
        Counts second = ingest(collector, postJson(collector.uri(target), batch(EVENTS)));

        assertEquals(new Counts(2, 0, 1), first);
        assertEquals(new Counts(2, 0, 1), second, "no key, no deduplication");
        assertEquals(new Stats(before.batches() + 2, before.events() + 4, before.duplicates()), stats(collector));
        List<Row> rows = StoredBatches.withTarget(collector.dataFile(), target);
        assertEquals(2, rows.size());
        assertTrue(rows.stream().allMatch(row -> row.idempotencyKey().isEmpty()), "stored without a key");
    }

    @Test
    void malformedJsonIsRefused400WithAOneLineReasonAndNothingStored() {
        assertRefusedAndNothingStored(postToIngest("{\"events\":[{\"a\":1},\n{"), 400, "malformed JSON");
    }

    @Test
    void aBatchWithoutEventsIsRefused400() {
        assertRefusedAndNothingStored(postToIngest("{\"idempotency_key\":\"" + key() + "\"}"), 400,
                "\"events\" must be an array");
    }

    @Test
    void aBatchWhoseEventsIsNotAnArrayIsRefused400() {
        assertRefusedAndNothingStored(postToIngest("{\"events\":{\"name\":\"a\"}}"), 400,
                "\"events\" must be an array");
    }

    @Test
    void aJsonValueOtherThanAnObjectIsRefused400() {
        HttpResponse<String> answer = send(postToIngest(EVENTS));

        assertOneLineRefusal(answer, 400, "must be a JSON object");
    }

    @Test
    void aGzipEncodedBatchIsReadToCountItsEvents() {
        byte[] compressed = gzip(batch(EVENTS).getBytes(StandardCharsets.UTF_8));

        Counts counts = ingest(collector, postGzipped(collector.uri("/v1/ingest"), compressed));

        assertEquals(new Counts(2, 0, 1), counts);
    }

    @Test
    void aGzipEncodedBatchIsStoredAsReceivedStillCompressed() {
        String target = "/v1/ingest?run=" + UUID.randomUUID();
        byte[] compressed = gzip(batch(EVENTS).getBytes(StandardCharsets.UTF_8));

        ingest(collector, postGzipped(collector.uri(target), compressed));

        List<Row> rows = StoredBatches.withTarget(collector.dataFile(), target);
        assertEquals(1, rows.size());
        assertArrayEquals(compressed, rows.get(0).body(), "the body is kept as received, never decompressed");
        assertEquals("gzip", rows.get(0).contentEncoding());
        assertEquals("application/json", rows.get(0).contentType());
    }

    @Test
    void aKeyInsideAGzipEncodedBatchDeduplicatesIt() {
        byte[] compressed = gzip(keyedBatch(key(), EVENTS).getBytes(StandardCharsets.UTF_8));
        ingest(collector, postGzipped(collector.uri("/v1/ingest"), compressed));

        Counts again = ingest(collector, postGzipped(collector.uri("/v1/ingest"), compressed));

        assertEquals(new Counts(0, 3, 0), again);
    }

    @Test
    void aBodyThatIsNotGzipDespiteItsContentEncodingIsRefused400() {
        assertRefusedAndNothingStored(postToIngest(batch(EVENTS)).header("Content-Encoding", "gzip"), 400, "gzip");
    }

    @Test
    void anUnsupportedContentEncodingOnTheNativePathIsRefused415AndNothingStored() {
        assertRefusedAndNothingStored(postToIngest(batch(EVENTS)).header("Content-Encoding", "br"), 415,
                "Content-Encoding is not supported");
    }

    @Test
    void anIdempotencyKeyHeaderThatIsNotVisibleAsciiIsRefused400() {
        assertRefusedAndNothingStored(postToIngest(batch(EVENTS)).header("Idempotency-Key", "two words"), 400,
                "Idempotency-Key");
    }

    @Test
    void anIdempotencyKeyInTheBodyThatIsNotAStringIsRefused400() {
        HttpResponse<String> answer = send(postToIngest("{\"idempotency_key\":42,\"events\":[]}"));

        assertOneLineRefusal(answer, 400, "idempotency_key");
    }

    @Test
    void anEmptyEventsArrayIsAnsweredWithZeroCounts() {
        Counts counts = ingest(collector, postToIngest(batch("[]")));

        assertEquals(new Counts(0, 0, 0), counts);
    }

    @Test
    void anEmptyBodyIsRefused400() {
        assertRefusedAndNothingStored(postToIngest(""), 400, "JSON object");
    }

    /**
     * Product bug, reported, not fixed here: BatchReader parses with Jackson's defaults, which stop after the first
     * JSON value and ignore what follows (FAIL_ON_TRAILING_TOKENS is off), so this body is answered 200
     * {"accepted":1,...} and stored — the second document's events silently uncounted.
     */
    @Test
    void contentAfterTheBatchObjectIsMalformedJsonRefused400() {
        assertRefusedAndNothingStored(postToIngest("{\"events\":[{}]} {\"events\":[{},{}]}"), 400, "malformed JSON");
    }
}
