package dev.mcpd.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The choice of upstream from their states alone: order, waits, service and fail open, the sleep when none is ready. */
class FailoverOrderTest {

    private static final Instant NOW = Instant.parse("2026-12-07T12:00:00Z");
    private static final UpstreamBoard.Settings SETTINGS = new UpstreamBoard.Settings(
            new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10), () -> 0.5), Duration.ofSeconds(30), 4,
            Duration.ofSeconds(10), new ServiceState.Thresholds(1, 1));

    private final List<UpstreamState> states = List.of(state(1), state(2), state(3));

    private static UpstreamState state(int order) {
        return new UpstreamState(new Upstream(order, URI.create("http://upstream-" + order + ":4318")), SETTINGS);
    }

    private void waits(int order, Duration wait) {
        states.get(order - 1).failed("refused", OptionalInt.empty(), wait, false, Duration.ZERO, 1, NOW);
    }

    private void outOfService(int order) {
        states.get(order - 1).service.record(new ServiceState.Check(NOW, OptionalInt.empty(), Duration.ZERO, false,
                "probe no answer"));
    }

    private Optional<Integer> first(Set<Integer> passedOver) {
        return FailoverOrder.first(states, NOW, passedOver).map(Upstream::order);
    }

    @Test
    void theFirstInOrderThatIsNotWaitingIsChosen() {
        assertEquals(Optional.of(1), first(Set.of()));
        waits(1, Duration.ofSeconds(5));
        assertEquals(Optional.of(2), first(Set.of()));
        assertEquals(Optional.of(3), first(Set.of(2)), "an upstream the request already failed on is passed over");
        waits(2, Duration.ofSeconds(5));
        waits(3, Duration.ofSeconds(5));
        assertEquals(Optional.empty(), first(Set.of()));
    }

    @Test
    void upstreamsOutOfServiceArePassedOverUntilNoneIsInService() {
        outOfService(1);
        assertEquals(Optional.of(2), first(Set.of()));
        outOfService(2);
        outOfService(3);
        assertTrue(FailoverOrder.noneInService(states));
        assertEquals(Optional.of(1), first(Set.of()), "fail open: with none in service, order decides again");
    }

    @Test
    void theSleepEndsWithTheEarliestWaitOfAnUpstreamInService() {
        waits(1, Duration.ofMillis(300));
        waits(2, Duration.ofMillis(200));
        waits(3, Duration.ofMillis(900));
        Duration checkEvery = Duration.ofSeconds(1);
        assertEquals(Duration.ofMillis(200), FailoverOrder.sleep(states, NOW, checkEvery));
        outOfService(2);
        assertEquals(Duration.ofMillis(300), FailoverOrder.sleep(states, NOW, checkEvery),
                "an out of service upstream's wait does not wake the sleeper");
        assertEquals(Duration.ofMillis(250), FailoverOrder.sleep(states, NOW, Duration.ofMillis(250)),
                "never longer than checkEvery, so a stop is seen");
        assertEquals(Duration.ofMillis(1), FailoverOrder.sleep(states, NOW.plusMillis(300), checkEvery),
                "a wait ending now still sleeps a millisecond: no busy loop");
    }
}
