package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A lane's room for one entry: its stored size while it is read, its body's size once it is. */
class EntryRoomTest {

    private static SpoolEntry entryOf(int bodyBytes) {
        return new SpoolEntry(7, new SpoolRequest("POST", "/v1/logs", "application/json", "", "k7", Optional.empty(),
                1_700_000_000_000L, new byte[bodyBytes]));
    }

    @Test
    void anEntryReadKeepsRoomForItsBodyOnly() {
        DeliveryBudget budget = new DeliveryBudget(1_000);
        EntryRoom room = new EntryRoom(budget);
        assertTrue(room.tryTake(300));
        assertEquals(300, budget.held(), "its stored size while it is read");
        room.keepBody(entryOf(240));
        assertEquals(240, budget.held(), "what the body holds until its exchange completes");
    }

    @Test
    void roomRefusedTakesNothingAndRoomGivenBackLeavesNothingHeld() throws Exception {
        DeliveryBudget budget = new DeliveryBudget(1_000);
        EntryRoom room = new EntryRoom(budget);
        assertTrue(budget.tryTake(900));
        assertFalse(room.tryTake(300));
        assertEquals(900, budget.held());
        assertFalse(room.awaitRoom(300, System.nanoTime()), "no room, and the deadline passed");
        budget.give(900);
        assertTrue(room.tryTake(300));
        room.giveBack(300);
        assertEquals(0, budget.held());
    }
}
