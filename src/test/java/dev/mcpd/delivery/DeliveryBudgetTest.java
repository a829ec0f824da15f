package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Entries out for delivery hold at most the budget's bytes; the largest entry always fits alone. */
class DeliveryBudgetTest {

    @Test
    void bytesPastTheCapacityAreRefusedUntilSomeComeBack() throws Exception {
        DeliveryBudget budget = new DeliveryBudget(100);
        assertTrue(budget.tryTake(60));
        assertFalse(budget.tryTake(60), "60 + 60 > 100");
        assertEquals(60, budget.held(), "a refusal takes nothing");
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return budget.awaitRoom(60, System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        budget.give(60);
        assertTrue(waiting.get(30, TimeUnit.SECONDS));
        assertEquals(0, budget.held(), "waiting for room takes none");
        assertTrue(budget.tryTake(60));
    }

    @Test
    void aWaitForRoomEndsFalseAtItsDeadline() throws Exception {
        DeliveryBudget budget = new DeliveryBudget(100);
        assertTrue(budget.tryTake(100));
        assertFalse(budget.awaitRoom(1, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20)));
        assertFalse(budget.awaitRoom(1, System.nanoTime()), "a deadline already passed: no wait");
        assertTrue(budget.awaitRoom(0, System.nanoTime()), "nothing needs no room");
    }

    @Test
    void anEntryLargerThanTheBudgetGoesAloneRatherThanNever() throws Exception {
        DeliveryBudget budget = new DeliveryBudget(100);
        assertTrue(budget.tryTake(500), "nothing held: it goes");
        assertFalse(budget.tryTake(1), "nothing beside it");
        budget.give(500);
        assertEquals(0, budget.held());
        assertTrue(budget.awaitRoom(500, System.nanoTime()), "room for it whenever nothing is held");
    }

    @Test
    void theBudgetIsASixteenthOfTheHeapButNeverLessThanOneBody() {
        long heap = Runtime.getRuntime().maxMemory();
        assertEquals(heap / 16, DeliveryBudget.forHeap(1).capacity());
        assertEquals(heap, DeliveryBudget.forHeap(heap).capacity());
    }
}
