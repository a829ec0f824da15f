package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The spool's bound on its own: reservations, give-backs, the early check and the memory of refusals. */
class SpoolBoundAccountingTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    @Test
    void reservationsFillTheBoundExactlyAndOneByteMoreIsRefused() {
        SpoolBound bound = new SpoolBound(1000, clock::get);
        assertTrue(bound.reserve(600));
        assertTrue(bound.reserve(400));
        assertFalse(bound.reserve(1));
        assertEquals(1000, bound.claimed());
        assertEquals(1, bound.refused());
    }

    @Test
    void bytesGivenBackMakeRoomAgain() {
        SpoolBound bound = new SpoolBound(1000, clock::get);
        bound.recovered(900);
        assertFalse(bound.reserve(200));
        bound.giveBack(300);
        assertTrue(bound.reserve(200));
        assertEquals(800, bound.claimed());
    }

    @Test
    void theEarlyCheckCountsAnEntrysFramingAndCannotOverflowOnAHugeBody() {
        SpoolBound bound = new SpoolBound(1000, clock::get);
        assertTrue(bound.admits(1000 - RecordCodec.MIN_ENTRY_BYTES));
        assertFalse(bound.admits(1001 - RecordCodec.MIN_ENTRY_BYTES));
        assertFalse(bound.admits(Long.MAX_VALUE));
        assertTrue(bound.admits(-1), "no Content-Length: nothing to check yet");
        assertEquals(0, bound.claimed(), "checking reserves nothing");
        assertEquals(2, bound.refused());
    }

    @Test
    void aRefusalIsRememberedForTheWindowAfterIt() {
        SpoolBound bound = new SpoolBound(10, clock::get);
        assertFalse(bound.refusedWithin(Duration.ofSeconds(5)), "nothing refused yet");
        assertFalse(bound.reserve(11));
        clock.addAndGet(Duration.ofSeconds(5).toNanos());
        assertTrue(bound.refusedWithin(Duration.ofSeconds(5)));
        clock.addAndGet(1);
        assertFalse(bound.refusedWithin(Duration.ofSeconds(5)));
    }

    @Test
    void concurrentReservationsNeverPassTheBound() throws Exception {
        SpoolBound bound = new SpoolBound(100_000);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicLong taken = new AtomicLong();
        AtomicLong highest = new AtomicLong();
        List<Future<?>> racers = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                racers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        if (bound.reserve(7)) {
                            taken.addAndGet(7);
                            highest.accumulateAndGet(bound.claimed(), Math::max);
                            if (i % 3 == 0) {
                                bound.giveBack(7);
                                taken.addAndGet(-7);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> racer : racers) {
                racer.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(highest.get() <= 100_000, "claimed reached " + highest.get());
        assertEquals(taken.get(), bound.claimed(), "every reservation and give-back accounted for");
        assertTrue(bound.refused() > 0, "the race did reach the bound");
    }
}
