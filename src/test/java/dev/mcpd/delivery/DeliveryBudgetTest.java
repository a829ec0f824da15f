package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Entries out for delivery hold at most the budget's bytes; the largest entry always fits alone. */
class DeliveryBudgetTest {

    private static final Duration NO_WAIT = Duration.ZERO;

    @Test
    void bytesPastTheCapacityWaitUntilSomeComeBack() throws Exception {
        DeliveryBudget budget = new DeliveryBudget(100);
        assertTrue(budget.take(60, NO_WAIT));
        assertFalse(budget.take(60, NO_WAIT), "60 + 60 > 100");
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return budget.take(60, Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        budget.give(60);
        assertTrue(waiting.get(30, TimeUnit.SECONDS));
        assertEquals(60, budget.held());
    }

    @Test
    void anEntryLargerThanTheBudgetGoesAloneRatherThanNever() throws Exception {
        DeliveryBudget budget = new DeliveryBudget(100);
        assertTrue(budget.take(500, NO_WAIT), "nothing held: it goes");
        assertFalse(budget.take(1, NO_WAIT), "nothing beside it");
        budget.give(500);
        assertEquals(0, budget.held());
    }

    @Test
    void theBudgetIsASixteenthOfTheHeapButNeverLessThanOneBody() {
        long heap = Runtime.getRuntime().maxMemory();
        assertEquals(heap / 16, DeliveryBudget.forHeap(1).capacity());
        assertEquals(heap, DeliveryBudget.forHeap(heap).capacity());
    }
}
