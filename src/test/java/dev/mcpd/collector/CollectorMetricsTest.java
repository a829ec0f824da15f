package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.get;
import static dev.mcpd.collector.CollectorHttp.ingest;
import static dev.mcpd.collector.CollectorHttp.post;
import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.sendForBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The collector's meters on {@code GET /metrics}: ingest counts by path and the store's latency, moving with traffic. */
class CollectorMetricsTest {

    static final String ACCEPTED = "mcpd_ingest_accepted_total{path=\"%s\"}";
    static final String DUPLICATE = "mcpd_ingest_duplicate_total{path=\"%s\"}";
    static final String REJECTED = "mcpd_ingest_rejected_total{path=\"%s\"}";
    static final String STORE_LATENCY_COUNT = "mcpd_store_latency_seconds_count";

    @RegisterExtension
    static final SharedCollector collector = new SharedCollector();

    /** Every sample of a Prometheus text exposition, by its name and labels. */
    static Map<String, Double> scrape() {
        HttpResponse<String> answer = get(collector.uri("/metrics"));
        assertEquals(200, answer.statusCode());
        assertTrue(answer.headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain"));
        Map<String, Double> samples = new HashMap<>();
        for (String line : answer.body().split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                int space = line.lastIndexOf(' ');
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
        return samples;
    }

    static double sample(Map<String, Double> samples, String format, String path) {
        String name = String.format(format, path);
        Double value = samples.get(name);
        assertTrue(value != null, () -> name + " is exported; samples: " + samples.keySet());
        return value;
    }

    /** Asserts that the sample of the path moved by exactly {@code by} from the scrape before to the one after. */
    static void assertMoved(double by, Map<String, Double> before, Map<String, Double> after, String format,
                            String path) {
        assertEquals(sample(before, format, path) + by, sample(after, format, path), () -> String.format(format, path));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/v1/ingest", "/v1/traces", "/v1/logs", "/v1/metrics"})
    void theIngestCountersOfEveryPathAreExportedBeforeAnyTraffic(String path) {
        Map<String, Double> samples = scrape();

        sample(samples, ACCEPTED, path);
        sample(samples, DUPLICATE, path);
        sample(samples, REJECTED, path);
    }

    @Test
    void acceptedAndRejectedEventsOfANativeBatchAreCountedUnderItsPath() {
        Map<String, Double> before = scrape();

        ingest(collector, postJson(collector.uri("/v1/ingest"), "{\"events\":[{},{},{},\"x\"]}"));

        Map<String, Double> after = scrape();
        assertMoved(3, before, after, ACCEPTED, "/v1/ingest");
        assertMoved(1, before, after, REJECTED, "/v1/ingest");
        assertMoved(0, before, after, DUPLICATE, "/v1/ingest");
    }

    @Test
    void theEventsOfADuplicateBatchAreCountedAsDuplicates() {
        String body = "{\"idempotency_key\":\"" + UUID.randomUUID() + "\",\"events\":[{},{},7]}";
        ingest(collector, postJson(collector.uri("/v1/ingest"), body));
        Map<String, Double> before = scrape();

        ingest(collector, postJson(collector.uri("/v1/ingest"), body));

        Map<String, Double> after = scrape();
        assertMoved(3, before, after, DUPLICATE, "/v1/ingest");
        assertMoved(0, before, after, ACCEPTED, "/v1/ingest");
    }

    @Test
    void anOtlpExportIsCountedAsOneAcceptedEventUnderItsPathWithoutItsQuery() {
        Map<String, Double> before = scrape();

        sendForBytes(post(collector.uri("/v1/traces?tenant=a"), "application/x-protobuf", new byte[] {0x0a, 0x00}));

        Map<String, Double> after = scrape();
        assertMoved(1, before, after, ACCEPTED, "/v1/traces");
        assertMoved(0, before, after, ACCEPTED, "/v1/logs");
    }

    @Test
    void everyArchiveTransactionIsTimedInTheStoreLatency() {
        Map<String, Double> before = scrape();

        ingest(collector, postJson(collector.uri("/v1/ingest"), "{\"events\":[{}]}"));
        ingest(collector, postJson(collector.uri("/v1/ingest"), "{\"events\":[{}]}"));

        Map<String, Double> after = scrape();
        assertEquals(before.get(STORE_LATENCY_COUNT) + 2, after.get(STORE_LATENCY_COUNT));
        assertTrue(after.get("mcpd_store_latency_seconds_sum") > 0, "time was spent in the store");
    }

    @Test
    void aRefusedRequestMovesNoIngestCounter() {
        Map<String, Double> before = scrape();

        sendForBytes(post(collector.uri("/v1/ingest"), "application/json", "{not json".getBytes()));

        Map<String, Double> after = scrape();
        for (String format : new String[] {ACCEPTED, DUPLICATE, REJECTED}) {
            assertMoved(0, before, after, format, "/v1/ingest");
        }
        assertEquals(before.get(STORE_LATENCY_COUNT), after.get(STORE_LATENCY_COUNT), "the store was not asked");
    }

    @Test
    void theUptimeGaugeIsExported() {
        assertTrue(scrape().containsKey("mcpd_uptime_seconds"));
    }
}
