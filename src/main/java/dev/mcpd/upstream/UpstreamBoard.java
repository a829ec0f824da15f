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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of every upstream, in {@code --upstream} order: which one is waiting, until when and why, and how it has
 * answered. Camel's failover load balancer keeps no such per-endpoint state; {@link UpstreamFailover} reads and updates
 * it here.
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
     * Deliveries failed in a row, none of them a wait the upstream asked for, past which it is not up whatever its
     * probes say: a probe that passes through a proxy to a healthy server says nothing of a path that takes nothing.
     */
    static final int FAILED_DELIVERIES_THAT_OUTWEIGH_PROBES = 10;

    /**
     * What the board knows of one upstream; a copy, safe to read anywhere.
     *
     * @param window   how many requests may be in flight to it now (its adaptive limit)
     * @param inFlight how many are
     * @param protocol the HTTP version of its latest answer ({@code h1}, {@code h2}), or {@code unknown}; {@code kafka}
     *                 for a Kafka topic
     * @param batches  whether it takes relay batches (its probe said so)
     * @param requests HTTP requests sent to it (a relay batch is one; {@code delivered} counts entries)
     */
    public record View(Upstream upstream, boolean waiting, Optional<Instant> waitingUntil, Optional<String> waitCause,
                       int consecutiveFailures, OptionalInt lastStatus, Optional<Duration> lastLatency,
                       Optional<Instant> lastAnswer, long delivered, long failedAttempts, boolean up,
                       Optional<Instant> lastUp, int window, int inFlight, String protocol, boolean batches,
                       long requests, boolean inService, int checkSuccessesInARow, int checkFailuresInARow,
                       Optional<ServiceState.Check> lastCheck, long checksSucceeded, long checksFailed,
                       Optional<String> passiveChecks) {

        /**
         * The one word an operator reads first: {@code waiting} while in a wait; else {@code out-of-service} when its
         * checks took it out; else {@code up} when it answered lately; else {@code down}. Only {@code up} counts for
         * {@code /readyz}.
         */
        public String state() {
            return waiting ? "waiting" : !inService ? "out-of-service" : up ? "up" : "down";
        }
    }

    private static final class Status {
        final Upstream upstream;
        final UpstreamWindow window;
        volatile String protocol = "unknown";
        volatile UpstreamOffer offer = UpstreamOffer.UNKNOWN;
        /** Whether a probe has answered and said what it offers (until then, its offer is {@code UNKNOWN}). */
        volatile boolean offerKnown;
        /** When a delivery last asked for a check out of turn because the offer was unknown, or null. */
        Instant checkAskedAt;
        boolean probedOnce;
        final java.util.concurrent.atomic.AtomicLong requests = new java.util.concurrent.atomic.AtomicLong();
        Instant waitingUntil = Instant.MIN;
        String waitCause;
        /** The wait is what the upstream asked for (Retry-After): only time ends it. */
        boolean waitAskedFor;
        int consecutiveFailures;
        Integer lastStatus;
        Duration lastLatency;
        Instant lastAnswer;
        /** Last time its readiness probe answered 2xx or it took a delivery. */
        Instant lastUp;
        /** Why its probes are not checks (its probe path is not served there, or it is not probed), or null. */
        String passiveBecause;
        /** Not probed at all ({@code --upstream-probe N=off}): up while its deliveries do not fail. */
        boolean unprobed;
        /** It named h2c but refused the HTTP/2 preface (an HTTP/1.1 proxy passed the name on): HTTP/1.1 from now. */
        boolean prefaceRefused;
        boolean reportedUp;
        long delivered;
        long failedAttempts;
        final ServiceState service;

        Status(Upstream upstream, UpstreamWindow window, ServiceState.Thresholds thresholds) {
            this.upstream = upstream;
            this.window = window;
            this.service = new ServiceState(thresholds);
            if (upstream.isKafka()) {
                // A topic takes one record per entry, over Kafka's own protocol: nothing to find out by probing.
                this.protocol = "kafka";
                this.offer = new UpstreamOffer(UpstreamOffer.Http2.NONE, false);
                this.offerKnown = true;
            }
        }
    }

    private final List<Status> statuses = new ArrayList<>();
    private final Backoff backoff;
    private final InstantSource clock;
    private final Duration upWindow;
    private long failovers;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private boolean closed;

    public UpstreamBoard(List<URI> urls, Backoff backoff, InstantSource clock) {
        this(urls, backoff, clock, InternalTuning.DEFAULT.upWindow());
    }

    public UpstreamBoard(List<URI> urls, Backoff backoff, InstantSource clock, Duration upWindow) {
        this(urls, backoff, clock, upWindow, DEFAULT_MAX_IN_FLIGHT, InternalTuning.DEFAULT.deliveryTimeout());
    }

    /**
     * @param maxInFlight {@code --max-in-flight}: the most requests in flight to one upstream
     * @param timeout     the delivery timeout, beyond which an answer counts as lost to the upstream's window
     */
    public UpstreamBoard(List<URI> urls, Backoff backoff, InstantSource clock, Duration upWindow, int maxInFlight,
                         Duration timeout) {
        this(urls, backoff, clock, upWindow, maxInFlight, timeout, ServiceState.Thresholds.DEFAULT.healthy(),
                ServiceState.Thresholds.DEFAULT.unhealthy());
    }

    /**
     * @param healthyThreshold   successful checks in a row that bring an upstream back into service
     * @param unhealthyThreshold failed checks in a row (probes or deliveries) that take it out of service
     */
    public UpstreamBoard(List<URI> urls, Backoff backoff, InstantSource clock, Duration upWindow, int maxInFlight,
                         Duration timeout, int healthyThreshold, int unhealthyThreshold) {
        ServiceState.Thresholds thresholds = new ServiceState.Thresholds(healthyThreshold, unhealthyThreshold);
        for (int i = 0; i < urls.size(); i++) {
            statuses.add(new Status(new Upstream(i + 1, urls.get(i)), new UpstreamWindow(maxInFlight, timeout),
                    thresholds));
        }
        this.backoff = backoff;
        this.clock = clock;
        this.upWindow = upWindow;
    }

    public List<Upstream> upstreams() {
        return statuses.stream().map(s -> s.upstream).toList();
    }

    /** The window of requests in flight to {@code upstream}. */
    public UpstreamWindow window(Upstream upstream) {
        return statusOf(upstream).window;
    }

    /** A request goes out to {@code upstream}. */
    public void sending(Upstream upstream) {
        statusOf(upstream).requests.incrementAndGet();
    }

    /** What the latest probe of {@code upstream} showed it speaks. */
    public void offers(Upstream upstream, UpstreamOffer offer) {
        Status s = statusOf(upstream);
        if (s.prefaceRefused && offer.http2() == UpstreamOffer.Http2.PRIOR_KNOWLEDGE) {
            offer = new UpstreamOffer(UpstreamOffer.Http2.NONE, offer.batches());
        }
        if (!s.offer.equals(offer)) {
            LOG.info("upstream={} order={} http2={} batches={}", upstream.label(), upstream.order(),
                    offer.http2().describe(upstream.tls()), offer.batches());
        }
        s.offer = offer;
        s.offerKnown = true;
    }

    /**
     * Called with an upstream that took a delivery before any probe had said what it offers — it was unreachable at
     * the probe's first round and came back between two rounds: until the next round its entries would go one
     * request each, not in batches. The probe checks it at once instead (at most once a second per upstream).
     */
    public void whenOfferUnknown(java.util.function.Consumer<Upstream> checkNow) {
        this.checkNow = checkNow;
    }

    private volatile java.util.function.Consumer<Upstream> checkNow = upstream -> { };

    public UpstreamOffer offer(Upstream upstream) {
        return statusOf(upstream).offer;
    }

    /**
     * What {@code upstream} offers, once its first probe has answered (or failed), waiting up to {@code maxWait} for
     * that: at start, the first requests to it go the way it speaks (HTTP/2, batches) rather than the plain way.
     */
    public UpstreamOffer offerOnceProbed(Upstream upstream, Duration maxWait) throws InterruptedException {
        lock.lock();
        try {
            Status s = statusOf(upstream);
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
        Status s = statusOf(upstream);
        synchronized (s) {
            if (s.prefaceRefused) {
                return;
            }
            s.prefaceRefused = true;
            s.offer = new UpstreamOffer(UpstreamOffer.Http2.NONE, s.offer.batches());
        }
        LOG.warn("upstream={} order={} refused the HTTP/2 preface ({}) though its probe answer named h2c: an HTTP/1.1"
                + " proxy in between passes the name on; its requests go over HTTP/1.1 from now", upstream.label(),
                upstream.order(), cause);
    }

    /** The HTTP version {@code upstream} answered with last ({@code h1}, {@code h2}). */
    public void answeredWith(Upstream upstream, String protocol) {
        statusOf(upstream).protocol = protocol;
    }

    /** The first upstream, in order, that is not waiting now. */
    public Optional<Upstream> firstReady() {
        lock.lock();
        try {
            return firstReady(clock.instant());
        } finally {
            lock.unlock();
        }
    }

    private Optional<Upstream> firstReady(Instant now) {
        boolean failOpen = noneInService();
        for (Status status : statuses) {
            if ((failOpen || status.service.inService()) && !status.waitingUntil.isAfter(now)) {
                return Optional.of(status.upstream);
            }
        }
        return Optional.empty();
    }

    /**
     * True when every upstream is out of service: delivery then goes on trying them all, in order, at backoff pace
     * (fail open, as a load balancer does) — nothing waits for an operator.
     */
    private boolean noneInService() {
        for (Status status : statuses) {
            if (status.service.inService()) {
                return false;
            }
        }
        return true;
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
                boolean failOpen = noneInService();
                for (Status status : statuses) {
                    if ((failOpen || status.service.inService()) && !tried.contains(status.upstream.order())
                            && !status.waitingUntil.isAfter(now)) {
                        return status.upstream;
                    }
                }
                Optional<Upstream> ready = firstReady(now);
                if (ready.isPresent()) {
                    tried.clear();
                    return ready.get();
                }
                if (closed || stopRequested.getAsBoolean()) {
                    throw new DeliveryStopped();
                }
                boolean open = failOpen;
                // Out of service ones are passed over; a check that brings one back signals, as a wait that ends.
                Instant earliest = statuses.stream().filter(s -> open || s.service.inService())
                        .map(s -> s.waitingUntil).min(Instant::compareTo).orElse(now.plus(checkEvery));
                long nanos = Math.min(Duration.between(now, earliest).toNanos(), checkEvery.toNanos());
                changed.awaitNanos(Math.max(nanos, TimeUnit.MILLISECONDS.toNanos(1)));
            }
        } finally {
            lock.unlock();
        }
    }

    /** The upstream took the request (2xx). */
    public void delivered(Upstream upstream, int status, Duration latency) {
        delivered(upstream, status, latency, 1);
    }

    /** The upstream took a request of {@code entries} entries (a relay batch: those it archived). */
    public void delivered(Upstream upstream, int status, Duration latency, int entries) {
        boolean askCheck = false;
        lock.lock();
        try {
            Status s = statusOf(upstream);
            if (s.consecutiveFailures > 0) {
                LOG.info("upstream={} order={} state=up after_failures={}", upstream.label(), upstream.order(),
                        s.consecutiveFailures);
            }
            s.consecutiveFailures = 0;
            s.waitingUntil = Instant.MIN;
            s.waitCause = null;
            s.delivered += entries;
            checked(s, new ServiceState.Check(clock.instant(), OptionalInt.of(status), latency, true, ""));
            if (upstream.order() > 1) {
                failovers += entries;
            }
            answered(s, status, latency);
            markUp(s);
            changed.signalAll();
            Instant now = clock.instant();
            if (!s.offerKnown && (s.checkAskedAt == null || !now.isBefore(s.checkAskedAt.plusSeconds(1)))) {
                s.checkAskedAt = now;
                askCheck = true;
            }
        } finally {
            lock.unlock();
        }
        if (askCheck) {
            checkNow.accept(upstream); // outside the lock: the check answers on another thread
        }
    }

    /** The upstream answered, but refused the request for good: it is reachable, so it does not wait. */
    public void refusedPermanently(Upstream upstream, int status, Duration latency) {
        refusedPermanently(upstream, status, latency, 1);
    }

    /** As {@link #refusedPermanently(Upstream, int, Duration)}, for {@code entries} entries of one request. */
    public void refusedPermanently(Upstream upstream, int status, Duration latency, int entries) {
        refusedPermanently(upstream, OptionalInt.of(status), latency, entries);
    }

    /** As {@link #refusedPermanently(Upstream, int, Duration, int)}; no status when a Kafka broker refused. */
    public void refusedPermanently(Upstream upstream, OptionalInt status, Duration latency, int entries) {
        lock.lock();
        try {
            Status s = statusOf(upstream);
            s.failedAttempts += entries;
            if (status.isPresent()) {
                answered(s, status.getAsInt(), latency);
            } else {
                s.lastLatency = latency;
                s.lastAnswer = clock.instant();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A retryable failure: the upstream waits for {@code retryAfter} when it named one, else for a backoff.
     *
     * @param status the HTTP status, when it answered at all
     * @return the wait it was given
     */
    public Duration failed(Upstream upstream, String cause, OptionalInt status, Optional<Duration> retryAfter,
                           Duration latency) {
        return failed(upstream, cause, status, retryAfter, latency, 1);
    }

    /** As {@link #failed(Upstream, String, OptionalInt, Optional, Duration)}, for a request of {@code entries}. */
    public Duration failed(Upstream upstream, String cause, OptionalInt status, Optional<Duration> retryAfter,
                           Duration latency, int entries) {
        lock.lock();
        try {
            Status s = statusOf(upstream);
            s.consecutiveFailures++;
            s.failedAttempts += entries;
            if (status.isPresent()) {
                answered(s, status.getAsInt(), latency);
            } else {
                s.lastLatency = latency;
            }
            Duration wait = retryAfter.orElseGet(() -> backoff.next(s.consecutiveFailures));
            Instant now = clock.instant();
            checked(s, new ServiceState.Check(now, status, latency, false, "delivery " + cause));
            s.waitingUntil = now.plus(wait);
            s.waitCause = cause;
            s.waitAskedFor = retryAfter.isPresent();
            // One line when an upstream starts waiting, then at the 2nd, 4th, 8th… failure in a row: an outage
            // is visible without flooding the log.
            if (Integer.bitCount(s.consecutiveFailures) == 1) {
                LOG.warn("upstream={} order={} state=waiting for={}ms cause=\"{}\" consecutive_failures={}",
                        upstream.label(), upstream.order(), wait.toMillis(), cause, s.consecutiveFailures);
            }
            if (deliveriesOutweighProbes(s) && s.reportedUp) {
                s.reportedUp = false;
                LOG.warn("upstream={} order={} state=down cause=\"{}\" failed_deliveries_in_a_row={}: whatever its"
                        + " probes say", upstream.label(), upstream.order(), cause, s.consecutiveFailures);
            }
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
            Status s = statusOf(upstream);
            firstProbeAnswered(s);
            boolean success = failure.isEmpty();
            checked(s, new ServiceState.Check(clock.instant(), status, latency, success, "probe " + failure));
            if (success) {
                if (s.passiveBecause != null) {
                    s.passiveBecause = null;
                    LOG.info("upstream={} order={} answers its probe path: its probes are health checks again",
                            upstream.label(), upstream.order());
                }
                markUp(s);
                if (s.service.healthyRun() && !s.waitAskedFor && s.waitingUntil.isAfter(clock.instant())) {
                    s.waitingUntil = Instant.MIN;
                    s.waitCause = null;
                    LOG.info("upstream={} order={} state=up wait_ended_by=probe", upstream.label(), upstream.order());
                    changed.signalAll();
                }
            } else {
                reportIfDown(s, failure);
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
            Status s = statusOf(upstream);
            firstProbeAnswered(s);
            if (s.passiveBecause == null) {
                s.passiveBecause = probe + " answered " + status;
                LOG.warn("upstream={} order={} does not serve its probe ({}): its health comes from its deliveries;"
                        + " name a health address it serves (--probe-path, or --upstream-probe {}=URL) to check it"
                        + " between deliveries", upstream.label(), upstream.order(), s.passiveBecause,
                        upstream.order());
            }
            markUp(s);
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
            Status s = statusOf(upstream);
            s.unprobed = true;
            s.passiveBecause = "not probed (--upstream-probe " + upstream.order() + "=off)";
            firstProbeAnswered(s); // nothing to wait for
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the lanes that wait for an upstream's first probe to know what it speaks. */
    private void firstProbeAnswered(Status s) {
        if (!s.probedOnce) {
            s.probedOnce = true;
            changed.signalAll();
        }
    }

    /** Counts a check; one log line when it changes the upstream's service state. */
    private void checked(Status s, ServiceState.Check check) {
        boolean noneBefore = noneInService();
        ServiceState.Change change = s.service.record(check);
        if (change == ServiceState.Change.OUT_OF_SERVICE) {
            LOG.warn("upstream={} order={} out of service after {} failed checks: {}", s.upstream.label(),
                    s.upstream.order(), s.service.thresholds().unhealthy(), check.reason());
            if (noneInService()) {
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

    private void markUp(Status s) {
        s.lastUp = clock.instant();
        if (!s.reportedUp && !deliveriesOutweighProbes(s)) {
            s.reportedUp = true;
            LOG.info("upstream={} order={} state=up", s.upstream.label(), s.upstream.order());
        }
    }

    private void reportIfDown(Status s, String cause) {
        if (s.reportedUp && !isUp(s, clock.instant())) {
            s.reportedUp = false;
            LOG.warn("upstream={} order={} state=down cause=\"{}\" no_answer_for={}s", s.upstream.label(),
                    s.upstream.order(), cause, upWindow.toSeconds());
        }
    }

    private static boolean deliveriesOutweighProbes(Status s) {
        return s.consecutiveFailures >= FAILED_DELIVERIES_THAT_OUTWEIGH_PROBES && !s.waitAskedFor;
    }

    private boolean isUp(Status s, Instant now) {
        if (deliveriesOutweighProbes(s)) {
            return false;
        }
        if (s.unprobed && s.consecutiveFailures == 0) {
            return true;
        }
        return s.lastUp != null && !s.lastUp.plus(upWindow).isBefore(now);
    }

    /**
     * Whether any upstream in service answered its probe or took a delivery within the up window: what
     * {@code /readyz} calls ok. One that its checks took out of service does not count, however lately it answered.
     */
    public boolean anyUp() {
        lock.lock();
        try {
            Instant now = clock.instant();
            return statuses.stream().anyMatch(s -> s.service.inService() && isUp(s, now));
        } finally {
            lock.unlock();
        }
    }

    /** Requests delivered to an upstream other than the first, since start. */
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

    private void answered(Status s, int status, Duration latency) {
        s.lastStatus = status;
        s.lastLatency = latency;
        s.lastAnswer = clock.instant();
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

    public List<View> views() {
        lock.lock();
        try {
            Instant now = clock.instant();
            return statuses.stream().map(s -> {
                boolean waiting = s.waitingUntil.isAfter(now);
                return new View(s.upstream, waiting,
                        waiting ? Optional.of(s.waitingUntil) : Optional.empty(),
                        waiting ? Optional.ofNullable(s.waitCause) : Optional.empty(),
                        s.consecutiveFailures,
                        s.lastStatus == null ? OptionalInt.empty() : OptionalInt.of(s.lastStatus),
                        Optional.ofNullable(s.lastLatency), Optional.ofNullable(s.lastAnswer),
                        s.delivered, s.failedAttempts, isUp(s, now), Optional.ofNullable(s.lastUp),
                        s.window.limit(), s.window.inFlight(), s.protocol, s.offer.batches(), s.requests.get(),
                        s.service.inService(), s.service.successesInARow(), s.service.failuresInARow(),
                        s.service.last(), s.service.succeeded(), s.service.failed(),
                        Optional.ofNullable(s.passiveBecause));
            }).toList();
        } finally {
            lock.unlock();
        }
    }

    private Status statusOf(Upstream upstream) {
        return statuses.get(upstream.order() - 1);
    }
}
