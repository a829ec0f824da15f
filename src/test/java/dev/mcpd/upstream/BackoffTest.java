package dev.mcpd.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BackoffTest {

    private static final Duration BASE = Duration.ofSeconds(1);
    private static final Duration CAP = Duration.ofSeconds(60);

    private static Backoff withRandom(double value) {
        return new Backoff(BASE, CAP, () -> value);
    }

    @Test
    void theCeilingAfterTheFirstFailureIsTheBase() {
        assertEquals(Duration.ofSeconds(1), withRandom(0.5).ceiling(1));
    }

    @Test
    void theCeilingDoublesWithEveryFurtherConsecutiveFailure() {
        Backoff backoff = withRandom(0.5);
        assertEquals(Duration.ofSeconds(2), backoff.ceiling(2));
        assertEquals(Duration.ofSeconds(4), backoff.ceiling(3));
        assertEquals(Duration.ofSeconds(8), backoff.ceiling(4));
        assertEquals(Duration.ofSeconds(16), backoff.ceiling(5));
        assertEquals(Duration.ofSeconds(32), backoff.ceiling(6));
    }

    @Test
    void theCeilingIsCappedOnceDoublingWouldExceedTheCap() {
        Backoff backoff = withRandom(0.5);
        assertEquals(CAP, backoff.ceiling(7), "64 s is cut to the 60 s cap");
        assertEquals(CAP, backoff.ceiling(8));
    }

    @Test
    void theCeilingStaysAtTheCapForAnyNumberOfFailuresWithoutOverflowing() {
        Backoff backoff = withRandom(0.5);
        assertEquals(CAP, backoff.ceiling(31));
        assertEquals(CAP, backoff.ceiling(64));
        assertEquals(CAP, backoff.ceiling(Integer.MAX_VALUE));
    }

    @Test
    void aRandomDrawOfZeroGivesNoWait() {
        assertEquals(Duration.ZERO, withRandom(0.0).next(1));
        assertEquals(Duration.ZERO, withRandom(0.0).next(5));
    }

    @Test
    void aRandomDrawJustUnderOneGivesAWaitJustUnderTheCeiling() {
        Backoff backoff = withRandom(0.999);
        assertEquals(Duration.ofMillis(999), backoff.next(1));
        Duration third = backoff.next(3);
        assertTrue(third.compareTo(Duration.ofSeconds(4)) < 0, "below the 4 s ceiling: " + third);
        assertTrue(third.compareTo(Duration.ofMillis(3990)) >= 0, "just under the ceiling: " + third);
    }

    @Test
    void theWaitIsTheRandomFractionOfTheCeiling() {
        assertEquals(Duration.ofMillis(500), withRandom(0.5).next(1));
        assertEquals(Duration.ofSeconds(2), withRandom(0.5).next(3));
        assertEquals(Duration.ofSeconds(30), withRandom(0.5).next(10));
    }

    @Test
    void theStandardBackoffStartsAtOneSecondAndIsCappedAtOneMinute() {
        Backoff standard = Backoff.standard();
        assertEquals(Duration.ofSeconds(1), standard.ceiling(1));
        assertEquals(Duration.ofMinutes(1), standard.ceiling(7));
    }

    @Test
    void theStandardBackoffDrawsEveryWaitWithinZeroAndTheCeiling() {
        Backoff standard = Backoff.standard();
        for (int i = 0; i < 1000; i++) {
            Duration wait = standard.next(3);
            assertTrue(!wait.isNegative() && wait.compareTo(Duration.ofSeconds(4)) < 0, "in [0, 4 s): " + wait);
        }
    }

    @Test
    void theStandardBackoffIsJitteredSoThatDrawsDiffer() {
        Backoff standard = Backoff.standard();
        Set<Duration> distinct = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            distinct.add(standard.next(3));
        }
        assertTrue(distinct.size() > 100, "1000 draws over 4000 ms should spread widely, got " + distinct.size());
    }
}
