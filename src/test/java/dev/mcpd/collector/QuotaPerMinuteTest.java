package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.http.IngestRefusal;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** {@code --quota-per-minute} on a clock the test moves: N requests per wall-clock minute, then 429. */
class QuotaPerMinuteTest {

    static final DefaultCamelContext CAMEL = new DefaultCamelContext();
    /** 2025-11-24T16:00:00Z, the start of a minute. */
    static final Instant MINUTE = Instant.parse("2025-11-24T16:00:00Z");

    /** A clock that says what the test sets. */
    static final class SetClock implements InstantSource {
        volatile Instant now;

        SetClock(Instant now) {
            this.now = now;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @AfterAll
    static void closeCamel() throws Exception {
        CAMEL.close();
    }

    private static Exchange exchange() {
        return new DefaultExchange(CAMEL);
    }

    private static void take(QuotaPerMinute quota, int times) {
        for (int i = 0; i < times; i++) {
            quota.process(exchange());
        }
    }

    private static IngestRefusal refused(QuotaPerMinute quota) {
        return assertThrows(IngestRefusal.class, () -> quota.process(exchange()));
    }

    /** The Retry-After of the request refused once a quota of one was taken at this instant. */
    private static int retryAfterPastAQuotaOfOneAt(Instant now) {
        QuotaPerMinute quota = new QuotaPerMinute(1, new SetClock(now));
        take(quota, 1);

        return refused(quota).retryAfterSeconds().orElseThrow();
    }

    @Test
    void theRequestPastTheQuotaInOneMinuteIsRefused429() {
        SetClock clock = new SetClock(MINUTE.plusSeconds(10));
        QuotaPerMinute quota = new QuotaPerMinute(3, clock);
        take(quota, 3);

        IngestRefusal refusal = refused(quota);

        assertEquals(429, refusal.status());
        assertTrue(refusal.reason().contains("quota of 3 requests per minute"), refusal.reason());
    }

    @Test
    void retryAfterIsTheSecondsLeftInTheMinute() {
        assertEquals(15, retryAfterPastAQuotaOfOneAt(MINUTE.plusSeconds(45)));
    }

    @Test
    void retryAfterIsOneSecondInTheLastSecondOfTheMinute() {
        assertEquals(1, retryAfterPastAQuotaOfOneAt(MINUTE.plusMillis(59_999)));
    }

    @Test
    void retryAfterIsSixtySecondsAtTheFirstInstantOfTheMinute() {
        assertEquals(60, retryAfterPastAQuotaOfOneAt(MINUTE));
    }

    @Test
    void theCountStartsAgainAtTheNextMinute() {
        SetClock clock = new SetClock(MINUTE.plusMillis(59_999));
        QuotaPerMinute quota = new QuotaPerMinute(3, clock);
        take(quota, 3);
        refused(quota);

        clock.now = MINUTE.plusSeconds(60);

        take(quota, 3); // the next minute's three
        assertEquals(60, refused(quota).retryAfterSeconds().orElseThrow(), "and then its fourth is refused");
    }

    @Test
    void requestsInDifferentMinutesDoNotAddUp() {
        SetClock clock = new SetClock(MINUTE.plusSeconds(30));
        QuotaPerMinute quota = new QuotaPerMinute(2, clock);
        take(quota, 2);
        clock.now = MINUTE.plusSeconds(90);
        take(quota, 2);
        clock.now = MINUTE.plusSeconds(150);

        take(quota, 2);
    }

    @Test
    void aQuotaOfZeroRefusesNothing() {
        QuotaPerMinute quota = new QuotaPerMinute(0, new SetClock(MINUTE));

        take(quota, 10_000);
    }

    @Test
    void concurrentRequestsTakeExactlyTheQuota() throws Exception {
        QuotaPerMinute quota = new QuotaPerMinute(10, new SetClock(MINUTE.plusSeconds(5)));
        AtomicInteger taken = new AtomicInteger();
        AtomicInteger refusedCount = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            for (int i = 0; i < 200; i++) {
                pool.submit(() -> {
                    go.await();
                    try {
                        quota.process(exchange());
                        taken.incrementAndGet();
                    } catch (IngestRefusal e) {
                        refusedCount.incrementAndGet();
                    }
                    return null;
                });
            }
            go.countDown();
        } finally {
            pool.shutdown();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), "every request answered");
        }
        assertEquals(10, taken.get());
        assertEquals(190, refusedCount.get());
    }
}
