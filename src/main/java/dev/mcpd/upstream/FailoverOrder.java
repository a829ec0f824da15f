package dev.mcpd.upstream;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which upstream a request goes to, read from their states in {@code --upstream} order: the first that is in service
 * and not waiting, so traffic returns to the primary by itself once its wait is over. When every upstream is out of
 * service, all count as candidates (fail open, as a load balancer does): delivery goes on trying them in order at
 * backoff pace, and nothing waits for an operator. The board calls it under its lock.
 */
final class FailoverOrder {

    private FailoverOrder() {
    }

    /** The first candidate, in order, not waiting at {@code now} and not among {@code passedOver} (their orders). */
    static Optional<Upstream> first(List<UpstreamState> states, Instant now, Set<Integer> passedOver) {
        boolean failOpen = noneInService(states);
        for (UpstreamState s : states) {
            if ((failOpen || s.service.inService()) && !passedOver.contains(s.upstream.order()) && s.readyAt(now)) {
                return Optional.of(s.upstream);
            }
        }
        return Optional.empty();
    }

    /** True when every upstream is out of service: all are then candidates. */
    static boolean noneInService(List<UpstreamState> states) {
        for (UpstreamState s : states) {
            if (s.service.inService()) {
                return false;
            }
        }
        return true;
    }

    /**
     * How long to sleep when no candidate is ready: until the earliest candidate's wait ends, at most
     * {@code checkEvery}, at least a millisecond. Out of service upstreams are passed over: a check that brings one
     * back wakes the sleeper, as a wait that ends does.
     */
    static Duration sleep(List<UpstreamState> states, Instant now, Duration checkEvery) {
        boolean failOpen = noneInService(states);
        Instant earliest = states.stream().filter(s -> failOpen || s.service.inService())
                .map(s -> s.waitingUntil).min(Instant::compareTo).orElse(now.plus(checkEvery));
        Duration until = Duration.between(now, earliest);
        Duration sleep = until.compareTo(checkEvery) < 0 ? until : checkEvery;
        return sleep.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : sleep;
    }
}
