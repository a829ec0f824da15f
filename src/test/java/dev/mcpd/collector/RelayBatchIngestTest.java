package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.get;
import static dev.mcpd.collector.CollectorHttp.parse;
import static dev.mcpd.collector.CollectorHttp.post;
import static dev.mcpd.collector.CollectorHttp.send;
import static dev.mcpd.collector.CollectorHttp.stats;
import static dev.mcpd.testing.OtlpTelemetry.gzip;
import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpd.delivery.WireGzip;
import dev.mcpd.testing.DocExample;
import dev.mcpd.wire.RelayBatch;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A relay batch at the collector: each entry archived under its own key and answered on its own, a bad entry refused
 * alone, framing that cannot be read refused whole with one line — and none of it inflating past the body limit.
 */
class RelayBatchIngestTest {

    private static final int MAX_BODY = 64 * 1024;

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector(Map.of("MCPD_MAX_BODY_BYTES", "" + MAX_BODY));

    private static RelayBatch.Entry entry(String method, String target, String key, byte[] body) {
        return new RelayBatch.Entry(method, target, "application/json", "", key, 1_700_000_000_000L, body);
    }

    private static RelayBatch.Entry json(String key, String json) {
        return entry("POST", "/v1/ingest", key, json.getBytes(StandardCharsets.UTF_8));
    }

    private static HttpResponse<String> postBatch(byte[] body, String contentType, String contentEncoding) {
        var request = post(collector.uri(RelayBatch.PATH), contentType, body);
        if (!contentEncoding.isEmpty()) {
            request.header("Content-Encoding", contentEncoding);
        }
        return send(request);
    }

    private static List<JsonNode> outcomes(HttpResponse<String> answer) {
        assertEquals(200, answer.statusCode(), answer.body());
        List<JsonNode> outcomes = new ArrayList<>();
        parse(answer.body()).get("entries").forEach(outcomes::add);
        return outcomes;
    }

    private static String key(String name) {
        return name + "-" + UUID.randomUUID();
    }

    @Test
    void theAnswerIsTheRelayBatchPagesSampleForThePagesEntries() throws Exception {
        String stored = key("rb-stored");
        outcomes(postBatch(RelayBatch.encode(List.of(json(stored, "{\"events\":[{\"a\":1}]}"))),
                RelayBatch.CONTENT_TYPE, ""));
        // Three events, a path the collector does not ingest, and a key it already stored.
        List<RelayBatch.Entry> entries = List.of(json(key("rb-three"), "{\"events\":[{\"a\":1},{\"a\":2},{\"a\":3}]}"),
                entry("POST", "/v1/debug", key("rb-debug"), "{}".getBytes(StandardCharsets.UTF_8)),
                json(stored, "{\"events\":[{\"a\":1}]}"));
        HttpResponse<String> answer = postBatch(RelayBatch.encode(entries), RelayBatch.CONTENT_TYPE, "");
        assertEquals(200, answer.statusCode(), answer.body());
        assertEquals("application/json", answer.headers().firstValue("Content-Type").orElseThrow());
        assertEquals(parse(DocExample.block(Path.of("docs/relay-batch.md"), "relay-batch-answer")),
                parse(answer.body()));
    }

    @Test
    void eachEntryIsArchivedUnderItsOwnKeyAndTheSameBatchAgainIsAllDuplicates() {
        String first = key("rb-a");
        String second = key("rb-b");
        String third = key("rb-c");
        String firstJson = "{\"events\":[{\"a\":1},{\"a\":2}]}";
        List<RelayBatch.Entry> entries = List.of(json(first, firstJson), json(second, "{\"events\":[{\"b\":1}]}"),
                json(third, "{\"events\":[{\"c\":1},7]}"));
        var before = stats(collector);

        List<JsonNode> answered = outcomes(postBatch(RelayBatch.encode(entries), RelayBatch.CONTENT_TYPE, ""));

        assertEquals(List.of("200 2/0/0", "200 1/0/0", "200 1/0/1"), answered.stream().map(o -> o.get("status")
                + " " + o.get("accepted") + "/" + o.get("duplicate") + "/" + o.get("rejected")).toList());
        var after = stats(collector);
        assertEquals(3, after.batches() - before.batches(), "one stored batch per entry");
        assertEquals(4, after.events() - before.events());
        StoredBatches.Row stored = StoredBatches.withKey(collector.dataFile(), first).orElseThrow();
        assertEquals("/v1/ingest", stored.target());
        assertArrayEquals(firstJson.getBytes(StandardCharsets.UTF_8), stored.body(), "the entry's bytes, as sent");

        byte[] zipped = WireGzip.ifItSavesATenth(RelayBatch.encode(entries)).orElse(gzip(RelayBatch.encode(entries)));
        List<JsonNode> again = outcomes(postBatch(zipped, RelayBatch.CONTENT_TYPE, "gzip"));

        assertEquals(List.of("0/2", "0/1", "0/2"), again.stream().map(o -> o.get("accepted") + "/"
                + o.get("duplicate")).toList(), "each entry recognised by its own key");
        assertEquals(after.batches(), stats(collector).batches(), "nothing stored twice");
    }

    @Test
    void aBadEntryIsRefusedAloneWithItsOwnStatusAndReasonAndTheOthersAreArchived() {
        String good = key("rb-good");
        String alsoGood = key("rb-also-good");
        List<RelayBatch.Entry> entries = List.of(
                json(good, "{\"events\":[{\"ok\":1}]}"),
                entry("POST", "/v1/elsewhere", key("rb-elsewhere"), "{}".getBytes(StandardCharsets.UTF_8)),
                entry("GET", "/v1/ingest", key("rb-get"), new byte[0]),
                entry("POST", "/v1/ingest", key("rb-large"), new byte[MAX_BODY + 1]),
                json(key("rb-not-json"), "not json"),
                entry("POST", "/v1/ingest?{x}", key("rb-bad-target"), "{}".getBytes(StandardCharsets.UTF_8)),
                json(alsoGood, "{\"events\":[{\"ok\":2}]}"));
        var before = stats(collector);

        // Compressed, the batch passes the request size limit; the large entry inflates past it only inside.
        List<JsonNode> answered = outcomes(postBatch(gzip(RelayBatch.encode(entries)), RelayBatch.CONTENT_TYPE,
                "gzip"));

        assertEquals(List.of(200, 404, 405, 413, 400, 400, 200), answered.stream().map(o -> o.get("status").asInt())
                .toList());
        for (JsonNode refused : answered.subList(1, 6)) {
            String reason = refused.get("reason").asText();
            assertTrue(!reason.isBlank() && !reason.contains("\n") && !reason.contains("Exception"), reason);
        }
        assertEquals(2, stats(collector).batches() - before.batches(), "only the two good entries are stored");
        assertTrue(StoredBatches.withKey(collector.dataFile(), good).isPresent());
        assertTrue(StoredBatches.withKey(collector.dataFile(), alsoGood).isPresent());
    }

    @Test
    void eachEntryIsArchivedWithTheRelaysReceiveTimeButNeverAFutureOneOrTheCollectorsWhenItHasNone() {
        String relayTime = key("rb-relay-time");
        String noTime = key("rb-no-time");
        String zeroTime = key("rb-zero-time");
        String futureTime = key("rb-future-time");
        String body = "{\"events\":[{\"t\":1}]}";
        String common = "\"method\":\"POST\",\"target\":\"/v1/ingest\",\"contentType\":\"application/json\","
                + "\"contentEncoding\":\"\",";
        byte[] batch = framing(List.of(
                "{" + common + "\"idempotencyKey\":\"" + relayTime + "\",\"receivedAtMillis\":1700000000000}",
                "{" + common + "\"idempotencyKey\":\"" + noTime + "\"}",
                "{" + common + "\"idempotencyKey\":\"" + zeroTime + "\",\"receivedAtMillis\":0}",
                "{" + common + "\"idempotencyKey\":\"" + futureTime + "\",\"receivedAtMillis\":99999999999999}"),
                body.getBytes(StandardCharsets.UTF_8));
        long before = System.currentTimeMillis();
        List<JsonNode> answered = outcomes(postBatch(batch, RelayBatch.CONTENT_TYPE, ""));
        long after = System.currentTimeMillis();

        assertEquals(List.of(200, 200, 200, 200), answered.stream().map(o -> o.get("status").asInt()).toList());
        assertEquals(1_700_000_000_000L, StoredBatches.withKey(collector.dataFile(), relayTime).orElseThrow()
                .receivedAtMillis(), "the relay's receive time");
        for (String key : List.of(noTime, zeroTime, futureTime)) {
            long archived = StoredBatches.withKey(collector.dataFile(), key).orElseThrow().receivedAtMillis();
            assertTrue(archived >= before && archived <= after, key + ": the collector's receive time, " + archived
                    + " not in [" + before + ", " + after + "]");
        }
    }

    @Test
    void aRelayWhoseClockIsDaysOffHasItsEntriesArchivedByHowLongItHeldThemNotByItsClock() {
        long thirtyDays = Duration.ofDays(30).toMillis();
        long relayNow = System.currentTimeMillis() - thirtyDays; // the relay's clock, 30 days behind
        String fresh = key("rb-late-clock-fresh");
        String heldAnHour = key("rb-late-clock-hour");
        byte[] body = "{\"events\":[{\"t\":1}]}".getBytes(StandardCharsets.UTF_8);
        RelayBatch.Entry justReceived = new RelayBatch.Entry("POST", "/v1/ingest", "application/json", "", fresh,
                relayNow - 5, body);
        RelayBatch.Entry receivedAnHourAgo = new RelayBatch.Entry("POST", "/v1/ingest", "application/json", "",
                heldAnHour, relayNow - 3_600_000, body);
        long before = System.currentTimeMillis();
        List<JsonNode> answered = outcomes(postBatch(RelayBatch.encode(List.of(justReceived, receivedAnHourAgo),
                relayNow), RelayBatch.CONTENT_TYPE, ""));
        long after = System.currentTimeMillis();

        assertEquals(List.of(200, 200), answered.stream().map(o -> o.get("status").asInt()).toList());
        long archivedFresh = StoredBatches.withKey(collector.dataFile(), fresh).orElseThrow().receivedAtMillis();
        assertTrue(archivedFresh >= before - 5 && archivedFresh <= after, "received moments ago by the collector's"
                + " clock, not 30 days ago: " + (after - archivedFresh) + " ms before the answer");
        long archivedHour = StoredBatches.withKey(collector.dataFile(), heldAnHour).orElseThrow().receivedAtMillis();
        assertTrue(archivedHour >= before - 3_600_000 && archivedHour <= after - 3_600_000,
                "an hour before the batch arrived: " + (after - archivedHour) + " ms before the answer");
    }

    @Test
    void framingThatCannotBeReadRefusesTheWholeBatchWithOneLineAndStoresNothing() {
        byte[] valid = RelayBatch.encode(List.of(json(key("rb-hostile"), "{\"events\":[{}]}")));
        Map<String, HttpResponse<String>> answers = new LinkedHashMap<>();
        byte[] otherMagic = valid.clone();
        otherMagic[3] = '2';
        answers.put("magic MRB2", postBatch(otherMagic, RelayBatch.CONTENT_TYPE, ""));
        answers.put("cut in the middle of an entry", postBatch(Arrays.copyOf(valid, valid.length - 3),
                RelayBatch.CONTENT_TYPE, ""));
        answers.put("a byte after the last entry", postBatch(Arrays.copyOf(valid, valid.length + 1),
                RelayBatch.CONTENT_TYPE, ""));
        answers.put("a count of -1", postBatch(withInt(valid, 4, -1), RelayBatch.CONTENT_TYPE, ""));
        answers.put("a count of 2^31-1 with one entry", postBatch(withInt(valid, 4, Integer.MAX_VALUE),
                RelayBatch.CONTENT_TYPE, ""));
        answers.put("a header of 1 GiB", postBatch(withInt(valid, 8, 1 << 30), RelayBatch.CONTENT_TYPE, ""));
        answers.put("a header that is not JSON", postBatch(framing("{not json", 0, 0), RelayBatch.CONTENT_TYPE, ""));
        answers.put("a header without a target", postBatch(framing("{\"method\":\"POST\"}", 0, 0),
                RelayBatch.CONTENT_TYPE, ""));
        answers.put("a body length of 2^31-1 and 10 bytes", postBatch(framing(header(), Integer.MAX_VALUE, 10),
                RelayBatch.CONTENT_TYPE, ""));
        answers.put("Content-Type application/json", postBatch(valid, "application/json", ""));
        answers.put("Content-Encoding br", postBatch(valid, RelayBatch.CONTENT_TYPE, "br"));
        answers.put("Content-Encoding gzip, not gzip", postBatch(valid, RelayBatch.CONTENT_TYPE, "gzip"));
        int large = MAX_BODY + (int) RelayBatch.FRAMING_ALLOWANCE + 1024 * 1024;
        byte[] bomb = gzip(framing(header(), large, large));
        answers.put("gzip of " + bomb.length + " bytes inflating to " + large + "+", postBatch(bomb,
                RelayBatch.CONTENT_TYPE, "gzip"));
        var before = stats(collector);

        List<String> observed = new ArrayList<>();
        boolean all = true;
        for (Map.Entry<String, HttpResponse<String>> answer : answers.entrySet()) {
            int status = answer.getValue().statusCode();
            String body = answer.getValue().body();
            observed.add(answer.getKey() + " → " + status + " " + body.strip());
            boolean expected = answer.getKey().startsWith("gzip of") ? status == 413 : status == 400;
            all &= expected && body.indexOf('\n') == body.length() - 1 && !body.contains("Exception");
        }
        boolean nothingStored = stats(collector).equals(before);
        assertHostile("rb1", "relay batches whose framing cannot be read: " + String.join(", ", answers.keySet()),
                "400 each (413 for the gzip bomb) with one line; nothing stored", String.join("; ", observed)
                        + (nothingStored ? "; nothing stored" : "; STORED"), all && nothingStored);
        assertEquals(200, get(collector.uri("/readyz")).statusCode());
        assertEquals(1, outcomes(postBatch(valid, RelayBatch.CONTENT_TYPE, "")).size(), "and it takes batches still");
    }

    private static String header() {
        return "{\"method\":\"POST\",\"target\":\"/v1/ingest\",\"contentType\":\"application/json\","
                + "\"contentEncoding\":\"\",\"idempotencyKey\":\"" + key("rb-h") + "\",\"receivedAtMillis\":1}";
    }

    /** One entry's framing: this header, a declared body length, then that many zero bytes written. */
    private static byte[] framing(String header, int declaredBodyLength, int writtenBodyBytes) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write("MRB1".getBytes(StandardCharsets.US_ASCII));
            out.writeInt(1);
            byte[] headerBytes = header.getBytes(StandardCharsets.UTF_8);
            out.writeInt(headerBytes.length);
            out.write(headerBytes);
            out.writeInt(declaredBodyLength);
            byte[] zeros = new byte[64 * 1024];
            for (int left = writtenBodyBytes; left > 0; left -= zeros.length) {
                out.write(zeros, 0, Math.min(left, zeros.length));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** Entries of these headers, each with {@code body}. */
    private static byte[] framing(List<String> headers, byte[] body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write("MRB1".getBytes(StandardCharsets.US_ASCII));
            out.writeInt(headers.size());
            for (String header : headers) {
                byte[] headerBytes = header.getBytes(StandardCharsets.UTF_8);
                out.writeInt(headerBytes.length);
                out.write(headerBytes);
                out.writeInt(body.length);
                out.write(body);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static byte[] withInt(byte[] framing, int offset, int value) {
        byte[] changed = framing.clone();
        ByteBuffer.wrap(changed).putInt(offset, value);
        return changed;
    }
}
