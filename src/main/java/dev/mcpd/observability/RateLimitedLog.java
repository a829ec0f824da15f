package dev.mcpd.observability;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * One log line per kind of event per interval: the first of a kind is logged at once; repeats within the interval are
 * counted and the count rides on the next line that is logged ({@code suppressed=N}). An outage that refuses
 * thousands of requests a second writes a line a second, not thousands.
 */
public final class RateLimitedLog {

    private static final class Window {
        long lastLoggedNanos;
        long suppressed;
    }

    private final Logger log;
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    public RateLimitedLog(Logger log, Duration interval) {
        this(log, interval, System::nanoTime);
    }

    RateLimitedLog(Logger log, Duration interval, LongSupplier nanoTime) {
        this.log = log;
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
    }

    /** Logs {@code line} at WARN unless a line of the same {@code kind} was logged within the interval. */
    public void warn(String kind, String line) {
        long suppressed;
        Window window = windows.computeIfAbsent(kind, k -> {
            Window fresh = new Window();
            fresh.lastLoggedNanos = nanoTime.getAsLong() - intervalNanos;
            return fresh;
        });
        synchronized (window) {
            long now = nanoTime.getAsLong();
            if (now - window.lastLoggedNanos < intervalNanos) {
                window.suppressed++;
                return;
            }
            suppressed = window.suppressed;
            window.suppressed = 0;
            window.lastLoggedNanos = now;
        }
        log.warn(suppressed == 0 ? line : line + " suppressed=" + suppressed);
    }
}
