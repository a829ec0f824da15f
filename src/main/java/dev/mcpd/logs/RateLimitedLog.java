package dev.mcpd.logs;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * One log line per kind of event per interval: the first of a kind is logged at once; repeats within the interval are
 * counted and the count rides on the next line that is logged ({@code suppressed=N}). An outage that refuses
 * thousands of requests a second writes a line a second, not thousands. A kind is a fixed word chosen by the caller
 * (a refusal's {@code Kind}), never text a sender wrote: the windows are bounded by {@value #MAX_KINDS} all the same.
 */
public final class RateLimitedLog {

    private static final class Window {
        long lastLoggedNanos;
        long suppressed;
    }

    /** Windows kept at most: a fixed set of kinds stays far below it. */
    static final int MAX_KINDS = 64;
    private static final String OVERFLOW_KIND = "\u0000other";

    private final Logger log;
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    public RateLimitedLog(Logger log, Duration interval) {
        this(log, interval, System::nanoTime);
    }

    /** Windows held now (for tests: it never passes {@value #MAX_KINDS} + 1). */
    int windows() {
        return windows.size();
    }

    RateLimitedLog(Logger log, Duration interval, LongSupplier nanoTime) {
        this.log = log;
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
    }

    /** Logs {@code line} at WARN unless a line of the same {@code kind} was logged within the interval. */
    public void warn(String kind, String line) {
        long suppressed;
        // Kinds are meant to be a fixed set of words; should a caller ever pass more, they share one window rather
        // than grow the map without bound.
        String key = windows.size() >= MAX_KINDS && !windows.containsKey(kind) ? OVERFLOW_KIND : kind;
        Window window = windows.computeIfAbsent(key, k -> {
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
