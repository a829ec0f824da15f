package dev.mcpd.upstream;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.AbstractLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How many requests may be in flight to one upstream at once: an adaptive limit between 1 and {@code --max-in-flight}
 * (Netflix concurrency-limits). It is the lesser of two of that library's limits, each fed every answer:
 *
 * <ul>
 *   <li><b>AIMD</b> for loss: every answer in time while the window is at least half used adds one (so a window
 *       doubles each round trip, like TCP's slow start); a drop — a timeout, a 408, 429, 503 or 504: the upstream
 *       saying it is overloaded — halves it at once (a refused connection or another 5xx leaves it: the upstream is
 *       down, and its wait deals with that);</li>
 *   <li><b>Gradient2</b> for latency: the window follows the ratio of the long-run answer time to the latest one, so
 *       it shrinks when answers slow down (an upstream that starts to queue) and grows by √window while they do
 *       not. A tolerance of 2 lets the latest answer take twice the long-run time before the window shrinks: a link
 *       between regions jitters by tens of milliseconds without the upstream being loaded.</li>
 * </ul>
 *
 * Both start at {@link #INITIAL} (or the maximum, when it is smaller). Netflix's own limits each miss one of the
 * three signals the relay must react to (AIMD ignores a rise in latency, Gradient2 ignores drops); the lesser of the
 * two reacts to all three.
 */
public final class UpstreamWindow {

    static final int INITIAL = 16;
    static final double GRADIENT_TOLERANCE = 2.0;
    static final double AIMD_BACKOFF = 0.5;
    static final Duration ACQUIRE_WAIT = Duration.ofMillis(250);

    /** One request's place in the window: given back exactly once, saying how its answer came. */
    public interface Slot {
        /** The upstream answered in time (a 2xx, or a refusal that says nothing of its load). */
        void answered();

        /** A timeout, a 408, 429, 503 or 504: the window shrinks. */
        void dropped();

        /** The request never went out (the relay is stopping, or the entry cannot be sent). */
        void unused();
    }

    private final LeastOf limit;
    private final SimpleLimiter<Void> limiter;
    private final int max;
    /**
     * Callers waiting for a place, and what wakes one. Not the library's BlockingLimiter: it wakes every waiter
     * (notifyAll) at every answer, one futex wake-up per lane per answer; this wakes one, and only when one waits.
     */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private final AtomicInteger waiters = new AtomicInteger();

    /**
     * @param max     {@code --max-in-flight}
     * @param timeout the delivery timeout: an answer slower than this counts as a drop
     */
    public UpstreamWindow(int max, Duration timeout) {
        this.max = max;
        int initial = Math.min(INITIAL, max);
        AIMDLimit loss = AIMDLimit.newBuilder().initialLimit(initial).minLimit(1).maxLimit(max)
                .backoffRatio(AIMD_BACKOFF).timeout(timeout.toNanos(), TimeUnit.NANOSECONDS).build();
        Gradient2Limit latency = Gradient2Limit.newBuilder().initialLimit(initial).minLimit(1).maxConcurrency(max)
                .rttTolerance(GRADIENT_TOLERANCE).build();
        this.limit = new LeastOf(initial, loss, latency);
        this.limiter = SimpleLimiter.newBuilder().limit(limit).build();
    }

    /**
     * A place in the window, waiting up to {@link #ACQUIRE_WAIT} for one; empty when none came free in time (the
     * caller looks again whether it should still send here: is the relay stopping, has this upstream started to
     * wait?).
     */
    public Optional<Slot> acquire() {
        Optional<Limiter.Listener> place = limiter.acquire(null);
        if (place.isPresent()) {
            return place.map(GivenBackOnce::new);
        }
        long deadline = System.nanoTime() + ACQUIRE_WAIT.toNanos();
        lock.lock();
        waiters.incrementAndGet(); // before the next try: a place given back from now on wakes this caller
        try {
            while (true) {
                place = limiter.acquire(null);
                long left = deadline - System.nanoTime();
                if (place.isPresent() || left <= 0) {
                    return place.map(GivenBackOnce::new);
                }
                freed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } finally {
            waiters.decrementAndGet();
            lock.unlock();
        }
    }

    /** A place came back: one waiting caller (if any) tries again. */
    private void givenBack() {
        if (waiters.get() > 0) {
            lock.lock();
            try {
                freed.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    /** The window now: how many may be in flight. */
    public int limit() {
        return limiter.getLimit();
    }

    public int inFlight() {
        return limiter.getInflight();
    }

    public int max() {
        return max;
    }

    private final class GivenBackOnce implements Slot {
        private final Limiter.Listener listener;
        private boolean given;

        GivenBackOnce(Limiter.Listener listener) {
            this.listener = listener;
        }

        @Override
        public synchronized void answered() {
            if (!given) {
                given = true;
                listener.onSuccess();
                givenBack();
            }
        }

        @Override
        public synchronized void dropped() {
            if (!given) {
                given = true;
                listener.onDropped();
                givenBack();
            }
        }

        @Override
        public synchronized void unused() {
            if (!given) {
                given = true;
                listener.onIgnore();
                givenBack();
            }
        }
    }

    /** The lesser of several limits, each fed every sample. */
    private static final class LeastOf extends AbstractLimit {
        private final AbstractLimit[] limits;

        LeastOf(int initial, AbstractLimit... limits) {
            super(initial);
            this.limits = limits;
        }

        @Override
        protected int _update(long startTime, long rtt, int inflight, boolean didDrop) {
            int least = Integer.MAX_VALUE;
            for (AbstractLimit each : limits) {
                each.onSample(startTime, rtt, inflight, didDrop);
                least = Math.min(least, each.getLimit());
            }
            return least;
        }
    }
}
