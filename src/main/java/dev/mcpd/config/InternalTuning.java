package dev.mcpd.config;

import java.time.Duration;
import java.util.List;

/**
 * The operational settings mcpd fixes instead of offering them as options, each held here once: every part that
 * uses one reads it from {@link #DEFAULT}, so there is one value however many read it. docs/command-line.md
 * ("Fixed settings") shows {@link #markdownTable()}, held to it by FixedSettingsTableTest. Tests shorten some of them
 * through {@code RelayApplication.Tuning} (the up window, and the Camel properties {@link #DELIVERY_TIMEOUT_PROPERTY}
 * and {@link #TLS_RELOAD_PROPERTY}); production never does.
 *
 * @param deliveryTimeout   an upstream's answer pausing this long, or not whole this long after the request was
 *                          written, makes the attempt a timeout (and a drop for its window). Not an option: an
 *                          answer that slow means a sick upstream, and failing over is better than waiting longer
 * @param upWindow          an upstream counts as up this long after its last good check or delivery. Not an option:
 *                          it only has to outlast a few probe intervals, and the thresholds are the options to turn
 * @param connectTimeout    a delivery's connection to an upstream not made by then fails. Not an option: a link that takes
 *                          longer is broken, and the attempt goes to the next upstream
 * @param backoffBase       the first wait after a failed attempt, at most (full jitter). Not an option: an upstream
 *                          asks for its own wait with Retry-After, which is honoured exactly
 * @param backoffCap        the longest wait backoff reaches. Not an option: longer leaves a recovered upstream idle;
 *                          Retry-After asks for longer when an upstream needs it
 * @param stopWait          on a stop, requests in flight get this long to be answered; unanswered entries stay
 *                          spooled. Not an option: nothing is lost either way, and it fits the usual 30 s grace
 * @param tlsReload         TLS files are read again this often. Not an option: renewals come days ahead
 * @param retryAfter        the Retry-After of every 503 (spool full, memory busy, starting, stopping). Not an
 *                          option: OpenTelemetry exporters honour it and back off on their own past it
 * @param firstByteDeadline a request whose body has not begun by then gets 408 (or --request-timeout-seconds, if
 *                          shorter). Not an option: it only frees connections that send nothing
 * @param unreadyFillPercent with no upstream up, /readyz says 503 once the spool is this full. Not an option: the
 *                          spool bound is the option to turn, and the 80% alert of deploy/prometheus matches it
 * @param syncTimeout       /relay/sync waits this long without {@code timeout=}. Not an option: the caller names its
 *                          own wait
 * @param maxWait           the longest wait {@code /relay/sync?timeout=} and {@code mcpd-relay-wait} may ask for. Not
 *                          an option: a caller that must wait longer asks again
 * @param maxRelayWaiters   senders waiting at once for their fate ({@code mcpd-relay-wait}); one more gets the plain
 *                          answer. Not an option: it bounds the bodies held for them, and callers fall back by
 *                          themselves
 * @param replayWait        {@code mcpd relay dead replay} beside a running relay waits this long for it to take the
 *                          entries back. Not an option: the relay takes them within a second when it runs
 * @param storeCheckTimeout the collector's /readyz fails when its store does not answer within this. Not an option:
 *                          it must stay below the readiness probe's timeout (3 s in the Helm chart)
 */
public record InternalTuning(
        Duration deliveryTimeout,
        Duration upWindow,
        Duration connectTimeout,
        Duration backoffBase,
        Duration backoffCap,
        Duration stopWait,
        Duration tlsReload,
        Duration retryAfter,
        Duration firstByteDeadline,
        int unreadyFillPercent,
        Duration syncTimeout,
        Duration maxWait,
        int maxRelayWaiters,
        Duration replayWait,
        Duration storeCheckTimeout) {

    /** The Camel property a test sets to shorten {@link #deliveryTimeout} (milliseconds). */
    public static final String DELIVERY_TIMEOUT_PROPERTY = "mcpd.delivery.timeout-ms";
    /** The Camel property the tls-reload route's timer reads (milliseconds). */
    public static final String TLS_RELOAD_PROPERTY = "mcpd.tls.reload-ms";

    /** What mcpd runs with. */
    public static final InternalTuning DEFAULT = new InternalTuning(
            Duration.ofSeconds(30),
            Duration.ofSeconds(30),
            Duration.ofSeconds(5),
            Duration.ofSeconds(1),
            Duration.ofMinutes(1),
            Duration.ofSeconds(10),
            Duration.ofSeconds(10),
            Duration.ofSeconds(5),
            Duration.ofSeconds(10),
            80,
            Duration.ofSeconds(10),
            Duration.ofSeconds(60),
            64,
            Duration.ofSeconds(30),
            Duration.ofSeconds(2));

    /** One row of the fixed-settings table: what it is, its value, why it is not an option. */
    public record Setting(String what, String value, String why) {
    }

    /** The Retry-After of a 503, in whole seconds, as the header says it. */
    public int retryAfterSeconds() {
        return Math.toIntExact(retryAfter.toSeconds());
    }

    /** The spool fill, a fraction, past which the relay is unready with no upstream up. */
    public double unreadyFill() {
        return unreadyFillPercent / 100.0;
    }

    /** Every setting, in the order of the record, as docs/command-line.md lists them. */
    public List<Setting> settings() {
        return List.of(
                new Setting("delivery timeout: an upstream's answer pausing this long, or not whole this long after"
                        + " the request", text(deliveryTimeout), "an answer that slow means a sick upstream: failing"
                        + " over beats waiting longer"),
                new Setting("up window: an upstream counts as up this long after its last good check or delivery",
                        text(upWindow), "it only has to outlast a few probe intervals; the thresholds are what to"
                        + " turn"),
                new Setting("connect timeout of a delivery (a probe connects within --probe-timeout-seconds)",
                        text(connectTimeout),
                        "a link slower to connect is broken; the attempt goes to the next upstream"),
                new Setting("first wait after a failed attempt, at most (full jitter)", text(backoffBase),
                        "an upstream asks for its own wait with Retry-After, honoured exactly"),
                new Setting("longest backoff wait", text(backoffCap),
                        "longer leaves a recovered upstream idle; Retry-After asks for more when needed"),
                new Setting("on a stop, time for requests in flight to be answered", text(stopWait),
                        "unanswered entries stay spooled, so nothing is lost; fits a 30 s grace period"),
                new Setting("TLS files read again every", text(tlsReload), "renewals come days ahead"),
                new Setting("Retry-After of every 503 (spool full, memory busy, starting, stopping)", text(retryAfter),
                        "OpenTelemetry exporters honour it and back off on their own past it"),
                new Setting("a request whose body has not begun gets 408 after (or --request-timeout-seconds, if"
                        + " shorter)", text(firstByteDeadline), "it only frees connections that send nothing"),
                new Setting("with no upstream up, /readyz is 503 once the spool is this full", unreadyFillPercent + "%",
                        "the spool bound is the option to turn; the alert McpdRelaySpoolOver80Percent matches it"),
                new Setting("/relay/sync wait without timeout=", text(syncTimeout), "the caller names its own wait"),
                new Setting("longest wait /relay/sync?timeout= and mcpd-relay-wait may ask for", text(maxWait),
                        "a caller that must wait longer asks again"),
                new Setting("senders waiting at once for their fate (mcpd-relay-wait)", Integer.toString(maxRelayWaiters),
                        "it bounds the bodies held for them; one more gets the plain answer at once"),
                new Setting("mcpd relay dead replay waits for a running relay to take the entries", text(replayWait),
                        "a running relay takes them within a second"),
                new Setting("collector: /readyz fails when the store does not answer within", text(storeCheckTimeout),
                        "it must stay below the readiness probe's timeout (3 s in the Helm chart)"));
    }

    /** The fixed-settings table of docs/command-line.md (Markdown), made from {@link #DEFAULT}. */
    public static String markdownTable() {
        StringBuilder table = new StringBuilder("| fixed setting | value | why not an option |\n|---|---|---|\n");
        for (Setting setting : DEFAULT.settings()) {
            table.append("| ").append(setting.what()).append(" | `").append(setting.value()).append("` | ")
                    .append(setting.why()).append(" |\n");
        }
        return table.toString();
    }

    private static String text(Duration duration) {
        return DurationText.format(duration);
    }
}
