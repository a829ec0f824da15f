package dev.mcpd.logs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mcpd.logs.RateLimitedLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * "Every refusal is one structured log line", without an outage writing thousands of lines a second: one line
 * per kind per interval, the count of the lines held back riding on the next one. Driven by a fake clock, so the
 * interval passes when the test says so.
 */
class RateLimitedLogTest {

    static final Duration INTERVAL = Duration.ofSeconds(1);

    /** A fake {@code System.nanoTime}: an arbitrary origin, as the real one has. */
    private final AtomicLong clock = new AtomicLong(123_456_789_000L);
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private Logger logger;
    private RateLimitedLog log;

    @BeforeEach
    void captureLines() {
        logger = (Logger) LoggerFactory.getLogger("test.rate-limited." + UUID.randomUUID());
        logger.setAdditive(false);
        logger.setLevel(Level.ALL);
        lines.start();
        logger.addAppender(lines);
        log = new RateLimitedLog(logger, INTERVAL, clock::get);
    }

    @AfterEach
    void detach() {
        logger.detachAppender(lines);
        lines.stop();
    }

    private List<String> messages() {
        return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    private void advance(Duration by) {
        clock.addAndGet(by.toNanos());
    }

    @Test
    void tenThousandDistinctKindsKeepABoundedNumberOfWindows() {
        // Issue 12: should a kind ever carry sender text, the map of windows still cannot grow with it.
        for (int i = 0; i < 10_000; i++) {
            log.warn("kind-" + i, "line " + i);
        }
        assertTrue(log.windows() <= RateLimitedLog.MAX_KINDS + 1, log.windows() + " windows");
        assertEquals(RateLimitedLog.MAX_KINDS + 1, messages().size(), "one line per kind kept, one for the rest");
    }

    @Test
    void theFirstLineOfAKindIsLoggedAtOnceAtWarn() {
        log.warn("503 full", "refused status=503 reason=\"full\"");
        assertEquals(List.of("refused status=503 reason=\"full\""), messages());
        assertEquals(Level.WARN, lines.list.get(0).getLevel());
    }

    @Test
    void repeatsWithinTheIntervalAreNotLogged() {
        log.warn("503 full", "first");
        log.warn("503 full", "second");
        advance(INTERVAL.minusNanos(1));
        log.warn("503 full", "third, one nanosecond before the interval ends");
        assertEquals(List.of("first"), messages());
    }

    @Test
    void theNextLoggedLineCarriesHowManyWereSuppressed() {
        log.warn("401", "refused 1");
        log.warn("401", "refused 2");
        log.warn("401", "refused 3");
        log.warn("401", "refused 4");
        advance(INTERVAL);
        log.warn("401", "refused 5");
        assertEquals(List.of("refused 1", "refused 5 suppressed=3"), messages());
    }

    @Test
    void theSuppressedCountStartsAgainAfterItWasReported() {
        log.warn("401", "a");
        log.warn("401", "b");
        advance(INTERVAL);
        log.warn("401", "c");
        advance(INTERVAL);
        log.warn("401", "d");
        log.warn("401", "e");
        log.warn("401", "f");
        advance(INTERVAL);
        log.warn("401", "g");
        assertEquals(List.of("a", "c suppressed=1", "d", "g suppressed=2"), messages());
    }

    @Test
    void aQuietIntervalLeavesTheNextLineWithoutASuppressedCount() {
        log.warn("413", "one");
        advance(INTERVAL.multipliedBy(5));
        log.warn("413", "two");
        assertEquals(List.of("one", "two"), messages());
    }

    @Test
    void differentKindsDoNotSuppressEachOther() {
        log.warn("503 full", "full 1");
        log.warn("401", "unauthorized 1");
        log.warn("503 full", "full 2");
        log.warn("413", "too large 1");
        log.warn("401", "unauthorized 2");
        assertEquals(List.of("full 1", "unauthorized 1", "too large 1"), messages());
        advance(INTERVAL);
        log.warn("413", "too large 2");
        log.warn("401", "unauthorized 3");
        log.warn("503 full", "full 3");
        assertEquals(List.of("full 1", "unauthorized 1", "too large 1", "too large 2",
                "unauthorized 3 suppressed=1", "full 3 suppressed=1"), messages());
    }

    @Test
    void theIntervalIsMeasuredFromTheLastLoggedLineNotFromTheLastCall() {
        log.warn("408", "first");
        advance(INTERVAL.dividedBy(2));
        log.warn("408", "held back, half an interval later");
        advance(INTERVAL.dividedBy(2));
        log.warn("408", "one interval after the first line");
        assertEquals(List.of("first", "one interval after the first line suppressed=1"), messages());
    }

    @Test
    void aClockThatWrapsAroundDoesNotSilenceOrFloodTheLog() {
        // System.nanoTime() may be any long and may overflow: only differences count.
        clock.set(Long.MAX_VALUE - INTERVAL.toNanos() / 2);
        log.warn("503", "before the wrap");
        log.warn("503", "held back");
        advance(INTERVAL);
        log.warn("503", "after the wrap");
        log.warn("503", "held back again");
        assertEquals(List.of("before the wrap", "after the wrap suppressed=1"), messages());
    }

    @Test
    void concurrentCallersWithinOneIntervalLogExactlyOneLineAndTheCountAddsUpOnTheNext() throws Exception {
        int threads = 8;
        int callsEach = 50_000; // long enough that the threads really overlap, not one after the other
        int rounds = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < rounds; round++) {
                // A fresh kind each round: the race for its first line and for the count starts from scratch.
                String kind = "503 full, round " + round;
                int before = lines.list.size();
                CyclicBarrier go = new CyclicBarrier(threads);
                List<Future<?>> callers = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    String line = "refused by thread " + t;
                    callers.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < callsEach; i++) {
                            log.warn(kind, line);
                        }
                        return null;
                    }));
                }
                for (Future<?> caller : callers) {
                    caller.get(30, TimeUnit.SECONDS);
                }
                List<String> logged = messages().subList(before, messages().size());
                assertEquals(1, logged.size(), "round " + round + ": the clock did not move, so one line for "
                        + threads * callsEach + " calls, got " + logged);
                assertTrue(logged.get(0).startsWith("refused by thread "), logged.get(0));
                assertFalse(logged.get(0).contains("suppressed="), logged.get(0));

                advance(INTERVAL);
                log.warn(kind, "after the interval");
                assertEquals("after the interval suppressed=" + (threads * callsEach - 1),
                        messages().get(messages().size() - 1), "round " + round + ": no repeat is lost from the count");
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
