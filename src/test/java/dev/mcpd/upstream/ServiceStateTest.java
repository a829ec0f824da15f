package dev.mcpd.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** The health checks' state machine: checks counted in a row, thresholds, and a check of the other kind starting over. */
class ServiceStateTest {

    static ServiceState.Check check(boolean success) {
        return new ServiceState.Check(Instant.EPOCH, OptionalInt.of(success ? 200 : 503), Duration.ofMillis(3),
                success, success ? "" : "answered 503");
    }

    @Test
    void outAfterTheUnhealthyThresholdInARowBackAfterTheHealthyThresholdInARow() {
        ServiceState state = new ServiceState(new ServiceState.Thresholds(2, 3));
        assertTrue(state.inService(), "starts in service");
        assertEquals(ServiceState.Change.NONE, state.record(check(false)));
        assertEquals(ServiceState.Change.NONE, state.record(check(false)));
        assertEquals(ServiceState.Change.OUT_OF_SERVICE, state.record(check(false)));
        assertEquals(ServiceState.Change.NONE, state.record(check(false)), "already out: no second change");
        assertEquals(ServiceState.Change.NONE, state.record(check(true)));
        assertEquals(ServiceState.Change.BACK_IN_SERVICE, state.record(check(true)));
        assertTrue(state.inService());
        assertEquals(2, state.succeeded());
        assertEquals(4, state.failed());
    }

    @Test
    void alternatingChecksNeverChangeTheState() {
        ServiceState out = new ServiceState(new ServiceState.Thresholds(2, 1));
        out.record(check(false));
        assertFalse(out.inService());
        for (int i = 0; i < 10; i++) {
            assertEquals(ServiceState.Change.NONE, out.record(check(true)));
            assertEquals(ServiceState.Change.NONE, out.record(check(false)));
        }
        assertFalse(out.inService(), "fail, succeed, fail, succeed… never two in a row");

        ServiceState in = new ServiceState(new ServiceState.Thresholds(1, 2));
        for (int i = 0; i < 10; i++) {
            in.record(check(false));
            in.record(check(true));
        }
        assertTrue(in.inService());
        assertEquals(1, in.successesInARow());
        assertEquals(0, in.failuresInARow());
    }
}
