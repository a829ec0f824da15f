package dev.mcpd.upstream;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.config.Options;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of every upstream, in {@code --upstream} order: which one is waiting, until when and why, and how it has
 * answered, and which goes next. Camel's failover load balancer keeps no such per-endpoint state: the relay's own
 * failover reads and updates it here. Each upstream's state is an {@link UpstreamState}; the board holds them in order,
 * guards them with one lock, chooses through {@link FailoverOrder}, and wakes the delivery lanes that wait for an
 * upstream.
 *
 * <p>A retryable failure puts that upstream into a wait — exactly what its {@code Retry-After} named, else
 * exponential backoff with full jitter — and the request moves on to the next upstream. The first upstream whose wait
 * has ended is always chosen, so traffic returns to the primary by itself once its wait is over. When every upstream
 * waits, {@link #awaitReady} sleeps until the earliest wait ends: no busy loop, and no request is dropped.
 */
public final class UpstreamBoard {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.upstreams");

    /** Requests in flight to one upstream at most, unless {@code --max-in-flight} says otherwise. */
    public static final int DEFAULT_MAX_IN_FLIGHT = Options.MAX_IN_FLIGHT.defaultValue().orElseThrow();

    /**
     * How the board treats every upstream.
     *
     * @param backoff     the waits after failures that named none
     * @param upWindow    how long after its last good check or delivery an upstream counts as up
     * @param maxInFlight {@code --max-in-flight}: the most requests in flight to one upstream
     * @param timeout     the delivery timeout, beyond which an answer counts as lost to the upstream's window
     * @param thresholds  checks in a row that take an upstream out of service and bring it back
     */
    public record Settings(Backoff backoff, Duration upWindow, int maxInFlight, Duration timeout,
                           ServiceState.Thresholds thresholds) {

        /** Every option's and internal tuning's default, with {@code backoff}. */
        public static Settings defaults(Backoff backoff) {
            return new Settings(backoff, InternalTuning.DEFAULT.upWindow(), DEFAULT_MAX_IN_FLIGHT,
                    InternalTuning.DEFAULT.deliveryTimeout(), ServiceState.Thresholds.DEFAULT);
        }
    }

    private final List<UpstreamState> states = new ArrayList<>();
    private final Backoff backoff;
    private final InstantSource clock;
    private final Duration upWindow;
    private long failovers;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private boolean closed;
    private volatile Consumer<Upstream> checkNow = upstream -> { };

    public UpstreamBoard(List<URI> urls, Settings settings, InstantSource clock) {
        for (int i = 0; i < urls.size(); i++) {
            states.add(new UpstreamState(new Upstream(i + 1, urls.get(i)), settings));
        }
        this.backoff = settings.backoff();
        this.clock = clock;
        this.upWindow = settings.upWindow();
    }

    public List<Upstream> upstreams() {
        return states.stream().map(s -> s.upstream).toList();
    }

    /** The window of requests in flight to {@code upstream}. */
    public UpstreamWindow window(Upstream upstream) {
        return stateOf(upstream).window;
    }

    /** A request goes out to {@code upstream}. */
    public void sending(Upstream upstream) {
        stateOf(upstream).requests.incrementAndGet();
    }

    /** What the latest probe of {@code upstream} showed it speaks. */
    public void offers(Upstream upstream, UpstreamOffer offer) {
        stateOf(upstream).offers(offer);
    }

    /**
     * Called with an upstream that took a delivery before any probe had said what it offers — it was unreachable at
     * the probe's first round and came back between two rounds: until the next round its entries would go one
     * request each, not in batches. The probe checks it at once instead (at most once a second per upstream).
     */
    public void whenOfferUnknown(Consumer<Upstream> checkNow) {
        this.checkNow = checkNow;
    }

    public UpstreamOffer offer(Upstream upstream) {
        return stateOf(upstream).offer;
    }

    /**
     * What {@code upstream} offers, once its first probe has answered (or failed), waiting up to {@code maxWait} for
     * that: at start, the first requests to it go the way it speaks (HTTP/2, batches) rather than the plain way.
     */
    public UpstreamOffer offerOnceProbed(Upstream upstream, Duration maxWait) throws InterruptedException {
        lock.lock();
        try {
            UpstreamState s = stateOf(upstream);
            long left = maxWait.toNanos();
            while (!s.probedOnce && !closed && left > 0) {
                left = changed.awaitNanos(left);
            }
            return s.offer;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A connection opened with HTTP/2's preface (the upstream's probe answer named h2c) was not answered in HTTP/2:
     * something in between speaks HTTP/1.1 only, such as a reverse proxy that passed an mcpd collector's answer on.
     * Its requests go over HTTP/1.1 until the relay restarts; said once.
     */
    public void prefaceRefused(Upstream upstream, String cause) {
        stateOf(upstream).prefaceRefused(cause);
    }

    /** The HTTP version {@code upstream} answered with last ({@code h1}, {@code h2}). */
    public void answeredWith(Upstream upstream, String protocol) {
        stateOf(upstream).protocol = protocol;
    }

    /** The first upstream, in order, that is not waiting now. */
    public Optional<Upstream> firstReady() {
        lock.lock();
        try {
            return FailoverOrder.first(states, clock.instant(), Set.of());
        } finally {
            lock.unlock();
        }
    }

    /**
     * The first upstream, in order, that is not waiting; when all wait, sleeps until the earliest wait ends.
     *
     * @param stopRequested asked at least every {@code checkEvery} while sleeping: true gives up the wait
     * @throws DeliveryStopped when the board is closed or a stop is requested while waiting
     */
    public Upstream awaitReady(BooleanSupplier stopRequested, Duration checkEvery) throws InterruptedException {
        return awaitReady(new HashSet<>(), stopRequested, checkEvery);
    }

    /**
     * As {@link #awaitReady(BooleanSupplier, Duration)} for one request that already failed on the upstreams in
     * {@code tried} (their orders): an untried upstream that is ready comes first, so the request moves on to the
     * next upstream even when the one that just failed drew a wait of almost nothing (full jitter can). Only when no
     * untried upstream is ready does the request go back to a tried one that is, and {@code tried} starts over.
     */
    public Upstream awaitReady(Set<Integer> tried, BooleanSupplier stopRequested, Duration checkEvery)
            throws InterruptedException {
        lock.lock();
        try {
            while (true) {
                Instant now = clock.instant();
                Optional<Upstream> untried = FailoverOrder.first(states, now, tried);
                if (untried.isPresent()) {
                    return untried.get();
                }
                Optional<Upstream> ready = FailoverOrder.first(states, now, Set.of());
                if (ready.isPresent()) {
                    tried.clear();
                    return ready.get();
                }
                if (closed || stopRequested.getAsBoolean()) {
                    throw new DeliveryStopped();
                }
                changed.awaitNanos(FailoverOrder.sleep(states, now, checkEvery).toNanos());
            }
        } finally {
            lock.unlock();
        }
    }

    /** The upstream took a request of {@code entries} entries (for a relay batch: those it archived). */
    public void delivered(Upstream upstream, int status, Duration latency, int entries) {
        boolean askCheck;
        lock.lock();
        try {
            UpstreamState s = stateOf(upstream);
            Instant now = clock.instant();
            checked(s, new ServiceState.Check(now, OptionalInt.of(status), latency, true, ""));
            askCheck = s.delivered(status, latency, entries, now);
            if (upstream.order() > 1) {
                failovers += entries;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (askCheck) {
            checkNow.accept(upstream); // outside the lock: the check answers on another thread
        }
    }

    /**
     * The upstream answered, but refused {@code entries} entries of one request for good: it is reachable, so it
     * does not wait. No status when a Kafka broker refused.
     */
    public void refusedPermanently(Upstream upstream, OptionalInt status, Duration latency, int entries) {
        lock.lock();
        try {
            stateOf(upstream).refused(status, latency, entries, clock.instant());
        } finally {
            lock.unlock();
        }
    }

    /**
     * A retryable failure of a request of {@code entries} entries: the upstream waits for {@code retryAfter} when it
     * named one, else for a backoff.
     *
     * @param status the HTTP status, when it answered at all
     * @return the wait it was given
     */
    public Duration failed(Upstream upstream, String cause, OptionalInt status, Optional<Duration> retryAfter,
                           Duration latency, int entries) {
        lock.lock();
        try {
            UpstreamState s = stateOf(upstream);
            Duration wait = retryAfter.orElseGet(() -> backoff.next(s.consecutiveFailures() + 1));
            Instant now = clock.instant();
            s.failed(cause, status, wait, retryAfter.isPresent(), latency, entries, now);
            checked(s, new ServiceState.Check(now, status, latency, false, "delivery " + cause));
            changed.signalAll();
            return wait;
        } finally {
            lock.unlock();
        }
    }

    /** A probe's result, a check that succeeds on a 2xx (tests; the relay's probe also knows its timeout). */
    public void probed(Upstream upstream, OptionalInt status, Duration latency) {
        boolean success = status.isPresent() && status.getAsInt() / 100 == 2;
        probed(upstream, status, latency, success ? "" : status.isPresent() ? "answered " + status.getAsInt()
                : "no answer");
    }

    /**
     * The result of a health check ({@code GET <upstream><--probe-path>}): {@code failure} is "" when it answered
     * 2xx within the probe timeout, else why it failed. A success keeps the upstream up; a run of
     * them long enough to call it healthy brings it back into service and ends a backoff wait at once — a primary
     * that is back gets its traffic within a probe interval of that, not after a backoff of up to a minute — but never
     * a wait the upstream asked for with {@code Retry-After}.
     */
    public void probed(Upstream upstream, OptionalInt status, Duration latency, String failure) {
        lock.lock();
        try {
            UpstreamState s = stateOf(upstream);
            firstProbeAnswered(s);
            Instant now = clock.instant();
            boolean success = failure.isEmpty();
            checked(s, new ServiceState.Check(now, status, latency, success, "probe " + failure));
            if (!success) {
                s.probeFailed(failure, now);
            } else if (s.probeSucceeded(now)) {
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A probe answered 404, 405 or 501: the upstream does not serve the probe path (an OpenTelemetry Collector's OTLP
     * receiver answers a GET with 405). The answer is no verdict on its health, so it is not a check: its service
     * state comes from its deliveries (and from probes that get no answer at all). It does show the upstream
     * answers, so it stays up. Said once, until a probe is answered 2xx again.
     */
    public void probedPassively(Upstream upstream, int status, String probe) {
        lock.lock();
        try {
            UpstreamState s = stateOf(upstream);
            firstProbeAnswered(s);
            s.probedPassively(status, probe, clock.instant());
        } finally {
            lock.unlock();
        }
    }

    /**
     * The upstream is not probed ({@code --upstream-probe N=off}): its deliveries alone are its checks, nothing is
     * waited for before the first delivery, and it counts as up while its deliveries do not fail.
     */
    public void notProbed(Upstream upstream) {
        lock.lock();
        try {
            UpstreamState s = stateOf(upstream);
            s.notProbed();
            firstProbeAnswered(s); // nothing to wait for
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the lanes that wait for an upstream's first probe to know what it speaks. */
    private void firstProbeAnswered(UpstreamState s) {
        if (!s.probedOnce) {
            s.probedOnce = true;
            changed.signalAll();
        }
    }

    /** Counts a check; one log line when it changes the upstream's service state, and when that changes the choice. */
    private void checked(UpstreamState s, ServiceState.Check check) {
        boolean noneBefore = FailoverOrder.noneInService(states);
        ServiceState.Change change = s.service.record(check);
        if (change == ServiceState.Change.OUT_OF_SERVICE) {
            LOG.warn("upstream={} order={} out of service after {} failed checks: {}", s.upstream.label(),
                    s.upstream.order(), s.service.thresholds().unhealthy(), check.reason());
            if (FailoverOrder.noneInService(states)) {
                LOG.warn("every upstream is out of service: delivery goes on trying them in order (fail open)");
            }
        } else if (change == ServiceState.Change.BACK_IN_SERVICE) {
            LOG.info("upstream={} order={} back in service after {} successful checks", s.upstream.label(),
                    s.upstream.order(), s.service.thresholds().healthy());
            if (noneBefore) {
                LOG.info("an upstream is in service again: delivery passes over those out of service");
            }
            changed.signalAll();
        }
    }

    /**
     * Whether any upstream in service answered its probe or took a delivery within the up window: what
     * {@code /readyz} calls ok. One that its checks took out of service does not count, however lately it answered.
     */
    public boolean anyUp() {
        lock.lock();
        try {
            Instant now = clock.instant();
            return states.stream().anyMatch(s -> s.service.inService() && s.isUp(now));
        } finally {
            lock.unlock();
        }
    }

    /** Entries delivered to an upstream other than the first, since start. */
    public long failovers() {
        lock.lock();
        try {
            return failovers;
        } finally {
            lock.unlock();
        }
    }

    public Duration upWindow() {
        return upWindow;
    }

    /** Wakes every waiter; from now on {@link #awaitReady} throws {@link DeliveryStopped}. */
    public void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    public List<UpstreamView> views() {
        lock.lock();
        try {
            Instant now = clock.instant();
            return states.stream().map(s -> s.view(now)).toList();
        } finally {
            lock.unlock();
        }
    }

    private UpstreamState stateOf(Upstream upstream) {
        return states.get(upstream.order() - 1);
    }
}
