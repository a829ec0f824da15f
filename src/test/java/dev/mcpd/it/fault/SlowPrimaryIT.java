package dev.mcpd.it.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.it.PackagedJar;
import dev.mcpd.relay.Forward;
import dev.mcpd.relay.TestUpstream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario d: a slow primary. A {@link TestUpstream} in front of the real collector forwards every
 * request at once, but holds the collector's answer to the first copy of every tenth request for
 * {@link #HOLD} — longer than the relay's read timeout, cut from 30 s to 1 s for the test with JVM system properties
 * ({@code -Dmcpd.delivery.timeout-ms=1000}, given through {@code JAVA_TOOL_OPTIONS}; the delivery route reads it,
 * 30 s when unset).
 * The relay gives up on those answers and sends the requests again; the collector has already archived them, so it
 * recognises each second copy by its idempotency key: duplicates recognised = slow requests, stored once.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SlowPrimaryIT {

    static final int REQUESTS = 300;
    static final Duration HOLD = Duration.ofMillis(2_500);
    static final String READ_TIMEOUT_MS = "1000";
    private static final Pattern SEQ = Pattern.compile("\"seq\":(\\d+)");

    @TempDir
    Path dir;

    @Test
    void aRequestWhoseAnswerComesTooLateIsSentAgainAndCountedOnce() throws Exception {
        try (FaultRig rig = new FaultRig(dir, Archive.sqlite(dir, 1))) {
            int collectorPort = PackagedJar.freePort();
            int relayPort = PackagedJar.freePort();
            PackagedJar collector = rig.collector(0, collectorPort);
            URI collectorUrl = URI.create(FaultRig.upstream(collectorPort));
            Set<String> seen = ConcurrentHashMap.newKeySet();
            AtomicInteger held = new AtomicInteger();
            TestUpstream slow = rig.keep(TestUpstream.start()).answer(r -> {
                String key = r.header("Idempotency-Key");
                boolean first = seen.add(key);
                Matcher seq = SEQ.matcher(new String(r.body(), StandardCharsets.UTF_8));
                boolean hold = first && seq.find() && Integer.parseInt(seq.group(1)) % 10 == 0;
                TestUpstream.Answer answer = Forward.to(collectorUrl, r);
                if (hold) {
                    held.incrementAndGet();
                    return answer.after(HOLD);
                }
                return answer;
            });
            PackagedJar relay = rig.relay(relayPort, Map.of("JAVA_TOOL_OPTIONS",
                    "-Dmcpd.delivery.timeout-ms=" + READ_TIMEOUT_MS), "--upstream", slow.url().toString());

            Senders senders = new Senders(rig.run, "d", REQUESTS, FaultRig.SENDERS, FaultRig.base(relayPort), null, 0)
                    .start();
            try {
                senders.await(Duration.ofSeconds(120));
            } finally {
                senders.stop();
            }
            FaultRig.Counts counts = rig.settle(senders, relay, List.of(collector));
            String scrape = FaultRig.metrics(relay);
            long failed = (long) FaultRig.metric(scrape, "mcpd_relay_failed_attempts_total");
            int copies = slow.received().size();
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
            List<String> problems = rig.verdict("d", "Slow primary (answer after the read timeout)",
                    REQUESTS + " requests from " + FaultRig.SENDERS + " senders; relay → a proxy → collector; the "
                            + "proxy forwards at once but holds the answer to the first copy of every 10th request "
                            + HOLD.toMillis() + " ms, past the relay's read timeout (" + READ_TIMEOUT_MS + " ms).",
                    senders, counts, extra, notes);
            assertEquals(List.of(), problems, "scenario d");
        }
    }
}
