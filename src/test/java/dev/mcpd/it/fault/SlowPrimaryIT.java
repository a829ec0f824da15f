package dev.mcpd.it.fault;

import dev.mcpd.relay.Forward;
import dev.mcpd.relay.TestUpstream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Scenario d: a slow primary. A {@link TestUpstream} in front of the real collector forwards every
 * request at once, but holds the collector's answer to the first copy of every tenth request for
 * {@link #HOLD} — longer than the relay's read timeout, cut from 30 s to 1 s for the test with JVM system properties
 * ({@code -Dmcpd.delivery.timeout-ms=1000}, given through {@code JAVA_TOOL_OPTIONS}; the delivery route reads it,
 * 30 s when unset).
 * The relay gives up on those answers and sends the requests again; the collector has already archived them, so it
 * recognises each second copy by its idempotency key: duplicates recognised = slow requests, stored once.
 */
class SlowPrimaryIT extends FaultScenario {

    static final int REQUESTS = 300;
    static final Duration HOLD = Duration.ofMillis(2_500);
    static final String READ_TIMEOUT_MS = "1000";
    private static final Pattern SEQ = Pattern.compile("\"seq\":(\\d+)");

    @Test
    void aRequestWhoseAnswerComesTooLateIsSentAgainAndCountedOnce() throws Exception {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger held = new AtomicInteger();
        try (FaultRig rig = scenario("d", "Slow primary (answer after the read timeout)")
                .primaryThroughTestUpstream(collector -> TestUpstream.start().answer(r -> {
                    String key = r.header("Idempotency-Key");
                    boolean first = seen.add(key);
                    Matcher seq = SEQ.matcher(new String(r.body(), StandardCharsets.UTF_8));
                    boolean hold = first && seq.find() && Integer.parseInt(seq.group(1)) % 10 == 0;
                    TestUpstream.Answer answer = Forward.to(collector, r);
                    if (hold) {
                        held.incrementAndGet();
                        return answer.after(HOLD);
                    }
                    return answer;
                }))
                .relayEnvironment("JAVA_TOOL_OPTIONS", "-Dmcpd.delivery.timeout-ms=" + READ_TIMEOUT_MS)
                .requests(REQUESTS)
                .start()) {
            rig.startLoad();
            rig.awaitLoad(Duration.ofSeconds(120));
            FaultRig.Counts counts = rig.settle();
            String scrape = rig.metrics();
            long failed = (long) Readings.metric(scrape, "mcpd_relay_failed_attempts_total");
            int copies = rig.testUpstream().received().size();
            int expectedSlow = (REQUESTS + 9) / 10;

            Map<String, Boolean> extra = new LinkedHashMap<>();
            extra.put("the proxy held " + expectedSlow + " answers (" + held.get() + ")", held.get() == expectedSlow);
            extra.put("the relay timed out on every held answer and sent it again (failed attempts " + failed + ")",
                    failed >= expectedSlow);
            extra.put("re-sends recognised by the collector >= held answers (" + counts.duplicatesRecognised() + ")",
                    counts.duplicatesRecognised() >= expectedSlow);
            String notes = String.format("Relay read timeout %s ms (`-Dmcpd.delivery.timeout-ms`); %d answers held %d ms; the collector got %d copies of %d requests; "
                            + "%d failed attempts (timeouts) at the relay.", READ_TIMEOUT_MS, held.get(),
                    HOLD.toMillis(), copies, REQUESTS, failed);
            rig.assertHolds(REQUESTS + " requests from " + FaultRig.SENDERS + " senders; relay → a proxy → collector; "
                            + "the proxy forwards at once but holds the answer to the first copy of every 10th "
                            + "request " + HOLD.toMillis() + " ms, past the relay's read timeout (" + READ_TIMEOUT_MS
                            + " ms).",
                    counts, extra, notes);
        }
    }
}
