package dev.mcpd.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.mcpd.wire.WaitDuration;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A wait is written as every option's duration is, up to a minute. */
class WaitDurationTest {

    @Test
    void aWaitTakesTheUnitsEveryOptionTakesUpToAMinute() {
        assertEquals(Duration.ofMillis(500), WaitDuration.parse("timeout", "500ms"));
        assertEquals(Duration.ofSeconds(10), WaitDuration.parse("timeout", "10s"));
        assertEquals(Duration.ofMinutes(1), WaitDuration.parse("timeout", "1m"));
        assertEquals(Duration.ofMinutes(1), WaitDuration.parse("timeout", " 1M "));
    }

    @Test
    void aLongerOrMalformedWaitIsRefusedInOneLineNamingWhatWasWrong() {
        assertEquals("mcpd-relay-wait is at most 60s", assertThrows(IllegalArgumentException.class,
                () -> WaitDuration.parse("mcpd-relay-wait", "61s")).getMessage());
        assertEquals("timeout is at most 60s", assertThrows(IllegalArgumentException.class,
                () -> WaitDuration.parse("timeout", "1h")).getMessage());
        for (String malformed : new String[] {"10", "1.5s", "-1s", "10 s", "ten seconds", ""}) {
            assertEquals("timeout must be a duration like 500ms, 10s or 1m", assertThrows(
                    IllegalArgumentException.class, () -> WaitDuration.parse("timeout", malformed)).getMessage(),
                    malformed);
        }
    }
}
