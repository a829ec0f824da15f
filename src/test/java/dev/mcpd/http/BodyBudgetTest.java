package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link BodyBudget}: the request-body bytes held at once never pass its capacity. */
class BodyBudgetTest {

    @Test
    void bytesExactlyFillingTheBudgetAreTakenAndOneMoreIsNot() {
        BodyBudget budget = new BodyBudget(100);
        assertTrue(budget.tryTake(60));
        assertTrue(budget.tryTake(40));
        assertEquals(100, budget.held());
        assertFalse(budget.tryTake(1));
        assertEquals(100, budget.held(), "a refusal takes nothing");
    }

    @Test
    void aBodyLargerThanTheWholeBudgetIsNeverTaken() {
        BodyBudget budget = new BodyBudget(100);
        assertFalse(budget.tryTake(101));
        assertFalse(budget.tryTake(Long.MAX_VALUE));
        assertEquals(0, budget.held());
    }

    @Test
    void bytesGivenBackCanBeTakenAgain() {
        BodyBudget budget = new BodyBudget(100);
        assertTrue(budget.tryTake(100));
        budget.give(30);
        assertEquals(70, budget.held());
        assertTrue(budget.tryTake(30));
        assertFalse(budget.tryTake(1));
    }

    @Test
    void theHeapBudgetIsAQuarterOfTheHeapAndNeverLessThanOneBody() {
        long quarter = Runtime.getRuntime().maxMemory() / BodyBudget.HEAP_SHARE;
        assertEquals(quarter, BodyBudget.forHeap(1).capacity());
        assertEquals(quarter + 1, BodyBudget.forHeap(quarter + 1).capacity());
        BodyBudget oneBody = BodyBudget.forHeap(quarter * 2);
        assertTrue(oneBody.tryTake(quarter * 2), "the largest allowed body can always be taken alone");
    }

    @Test
    void racingTakersNeverHoldMoreThanTheCapacity() throws Exception {
        BodyBudget budget = new BodyBudget(1_000);
        AtomicInteger taken = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                all.add(threads.submit(() -> {
                    go.await();
                    for (int i = 0; i < 1_000; i++) {
                        if (budget.tryTake(7)) {
                            taken.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> one : all) {
                one.get(30, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertEquals(1_000 / 7, taken.get());
        assertEquals(1_000 / 7 * 7, budget.held());
    }
}
