package dev.mcpd.testing;

import java.net.http.HttpClient;
import java.time.Duration;

/** What every test shares: how long it awaits a condition, and the one HTTP client it talks to servers with. */
public final class TestTuning {

    /** How long an in-process test awaits what it waits for (a delivery, a state change, a probe). */
    public static final Duration PATIENCE = Duration.ofSeconds(30);
    /** How long a test of separate processes awaits (a JVM starting, a cluster of processes settling). */
    public static final Duration PROCESS_PATIENCE = Duration.ofSeconds(60);
    /** HTTP/1.1, connections pooled, 5 s to connect: what every test sends its requests with. */
    public static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * For senders under faults (processes killed and restarted): a refused or dead connection is noticed within 2 s,
     * and the sender retries, as an SDK does.
     */
    public static final HttpClient QUICK_TO_GIVE_UP_HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();

    private TestTuning() {
    }
}
