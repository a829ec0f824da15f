package dev.mcpd.upstream;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the relay knows of one upstream: its wait, its answers, its window, what it speaks, its checks. Changed only
 * under the {@link UpstreamBoard}'s lock (the board decides which upstream goes next and wakes those waiting for one);
 * the few fields the HTTP sender sets on its own thread are volatile. Logs one line when the upstream's state changes.
 */
final class UpstreamState {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.upstreams");

    /**
     * Deliveries failed in a row, none of them a wait the upstream asked for, past which it is not up whatever its
     * probes say: a probe that passes through a proxy to a healthy server says nothing of a path that takes nothing.
     */
    static final int FAILED_DELIVERIES_THAT_OUTWEIGH_PROBES = 10;

    final Upstream upstream;
    final UpstreamWindow window;
    final ServiceState service;
    private final Duration upWindow;

    volatile String protocol = "unknown";
    volatile UpstreamOffer offer = UpstreamOffer.UNKNOWN;
    /** Whether a probe has answered and said what it offers (until then, its offer is {@code UNKNOWN}). */
    volatile boolean offerKnown;
    /** It named h2c but refused the HTTP/2 preface (an HTTP/1.1 proxy passed the name on): HTTP/1.1 from now. */
    private boolean prefaceRefused;
    final AtomicLong requests = new AtomicLong();

    /** When a delivery last asked for a check out of turn because the offer was unknown, or null. */
    private Instant checkAskedAt;
    boolean probedOnce;
    Instant waitingUntil = Instant.MIN;
    private String waitCause;
    /** The wait is what the upstream asked for (Retry-After): only time ends it. */
    private boolean waitAskedFor;
    private int consecutiveFailures;
    private Integer lastStatus;
    private Duration lastLatency;
    private Instant lastAnswer;
    /** Last time its readiness probe answered 2xx or it took a delivery. */
    private Instant lastUp;
    /** Why its probes are not checks (its probe path is not served there, or it is not probed), or null. */
    private String passiveBecause;
    /** Not probed at all ({@code --upstream-probe N=off}): up while its deliveries do not fail. */
    private boolean unprobed;
    private boolean reportedUp;
    private long delivered;
    private long failedAttempts;

    UpstreamState(Upstream upstream, UpstreamBoard.Settings settings) {
        this.upstream = upstream;
        this.window = new UpstreamWindow(settings.maxInFlight(), settings.timeout());
        this.service = new ServiceState(settings.thresholds());
        this.upWindow = settings.upWindow();
        if (upstream.isKafka()) {
            // A topic takes one record per entry, over Kafka's own protocol: nothing to find out by probing.
            this.protocol = "kafka";
            this.offer = new UpstreamOffer(UpstreamOffer.Http2.NONE, false);
            this.offerKnown = true;
        }
    }

    boolean readyAt(Instant now) {
        return !waitingUntil.isAfter(now);
    }

    /** What its latest probe showed it speaks (HTTP/1.1 only, once it refused the HTTP/2 preface). */
    void offers(UpstreamOffer shown) {
        UpstreamOffer taken = prefaceRefused && shown.http2() == UpstreamOffer.Http2.PRIOR_KNOWLEDGE
                ? new UpstreamOffer(UpstreamOffer.Http2.NONE, shown.batches()) : shown;
        if (!offer.equals(taken)) {
            LOG.info("upstream={} order={} http2={} batches={}", upstream.label(), upstream.order(),
                    taken.http2().describe(upstream.tls()), taken.batches());
        }
        offer = taken;
        offerKnown = true;
    }

    /** Said once: its requests go over HTTP/1.1 from now. */
    synchronized void prefaceRefused(String cause) {
        if (prefaceRefused) {
            return;
        }
        prefaceRefused = true;
        offer = new UpstreamOffer(UpstreamOffer.Http2.NONE, offer.batches());
        LOG.warn("upstream={} order={} refused the HTTP/2 preface ({}) though its probe answer named h2c: an HTTP/1.1"
                + " proxy in between passes the name on; its requests go over HTTP/1.1 from now", upstream.label(),
                upstream.order(), cause);
    }

    /**
     * It took a request of {@code entries} entries: its wait ends. Returns whether a check should run out of turn
     * (it took a delivery before any probe said what it offers; at most once a second).
     */
    boolean delivered(int status, Duration latency, int entries, Instant now) {
        if (consecutiveFailures > 0) {
            LOG.info("upstream={} order={} state=up after_failures={}", upstream.label(), upstream.order(),
                    consecutiveFailures);
        }
        consecutiveFailures = 0;
        waitingUntil = Instant.MIN;
        waitCause = null;
        delivered += entries;
        answered(OptionalInt.of(status), latency, now);
        markUp(now);
        if (!offerKnown && (checkAskedAt == null || !now.isBefore(checkAskedAt.plusSeconds(1)))) {
            checkAskedAt = now;
            return true;
        }
        return false;
    }

    /** It refused {@code entries} entries for good: it is reachable, so it does not wait. */
    void refused(OptionalInt status, Duration latency, int entries, Instant now) {
        failedAttempts += entries;
        answered(status, latency, now);
    }

    /** A retryable failure: it waits {@code wait} (what it asked for, when {@code askedFor}). */
    void failed(String cause, OptionalInt status, Duration wait, boolean askedFor, Duration latency, int entries,
                Instant now) {
        consecutiveFailures++;
        failedAttempts += entries;
        if (status.isPresent()) {
            answered(status, latency, now);
        } else {
            lastLatency = latency;
        }
        waitingUntil = now.plus(wait);
        waitCause = cause;
        waitAskedFor = askedFor;
        // One line when an upstream starts waiting, then at the 2nd, 4th, 8th… failure in a row: an outage is
        // visible without flooding the log.
        if (Integer.bitCount(consecutiveFailures) == 1) {
            LOG.warn("upstream={} order={} state=waiting for={}ms cause=\"{}\" consecutive_failures={}",
                    upstream.label(), upstream.order(), wait.toMillis(), cause, consecutiveFailures);
        }
        if (deliveriesOutweighProbes() && reportedUp) {
            reportedUp = false;
            LOG.warn("upstream={} order={} state=down cause=\"{}\" failed_deliveries_in_a_row={}: whatever its"
                    + " probes say", upstream.label(), upstream.order(), cause, consecutiveFailures);
        }
    }

    int consecutiveFailures() {
        return consecutiveFailures;
    }

    /**
     * Its probe answered 2xx in time: it is up, its probes are checks again, and — once the successes in a row make
     * it healthy — a backoff wait ends (never one it asked for). Returns whether a wait ended.
     */
    boolean probeSucceeded(Instant now) {
        if (passiveBecause != null) {
            passiveBecause = null;
            LOG.info("upstream={} order={} answers its probe path: its probes are health checks again",
                    upstream.label(), upstream.order());
        }
        markUp(now);
        if (service.healthyRun() && !waitAskedFor && waitingUntil.isAfter(now)) {
            waitingUntil = Instant.MIN;
            waitCause = null;
            LOG.info("upstream={} order={} state=up wait_ended_by=probe", upstream.label(), upstream.order());
            return true;
        }
        return false;
    }

    /** Its probe failed: said once when that makes it down. */
    void probeFailed(String cause, Instant now) {
        if (reportedUp && !isUp(now)) {
            reportedUp = false;
            LOG.warn("upstream={} order={} state=down cause=\"{}\" no_answer_for={}s", upstream.label(),
                    upstream.order(), cause, upWindow.toSeconds());
        }
    }

    /** Its probe path is not served there ({@code probe} answered {@code status}): said once, until a 2xx. */
    void probedPassively(int status, String probe, Instant now) {
        if (passiveBecause == null) {
            passiveBecause = probe + " answered " + status;
            LOG.warn("upstream={} order={} does not serve its probe ({}): its health comes from its deliveries;"
                    + " name a health address it serves (--probe-path, or --upstream-probe {}=URL) to check it"
                    + " between deliveries", upstream.label(), upstream.order(), passiveBecause, upstream.order());
        }
        markUp(now);
    }

    void notProbed() {
        unprobed = true;
        passiveBecause = "not probed (--upstream-probe " + upstream.order() + "=off)";
    }

    private void markUp(Instant now) {
        lastUp = now;
        if (!reportedUp && !deliveriesOutweighProbes()) {
            reportedUp = true;
            LOG.info("upstream={} order={} state=up", upstream.label(), upstream.order());
        }
    }

    private boolean deliveriesOutweighProbes() {
        return consecutiveFailures >= FAILED_DELIVERIES_THAT_OUTWEIGH_PROBES && !waitAskedFor;
    }

    boolean isUp(Instant now) {
        if (deliveriesOutweighProbes()) {
            return false;
        }
        if (unprobed && consecutiveFailures == 0) {
            return true;
        }
        return lastUp != null && !lastUp.plus(upWindow).isBefore(now);
    }

    private void answered(OptionalInt status, Duration latency, Instant now) {
        status.ifPresent(code -> lastStatus = code);
        lastLatency = latency;
        lastAnswer = now;
    }

    UpstreamView view(Instant now) {
        boolean waiting = waitingUntil.isAfter(now);
        return new UpstreamView(upstream,
                waiting ? Optional.of(new UpstreamView.Waiting(waitingUntil, String.valueOf(waitCause)))
                        : Optional.empty(),
                new UpstreamView.Answers(consecutiveFailures,
                        lastStatus == null ? OptionalInt.empty() : OptionalInt.of(lastStatus),
                        Optional.ofNullable(lastLatency), Optional.ofNullable(lastAnswer), Optional.ofNullable(lastUp),
                        isUp(now), delivered, failedAttempts),
                new UpstreamView.Traffic(window.limit(), window.inFlight(), protocol, offer.batches(),
                        requests.get()),
                new UpstreamView.Checks(service.inService(), Optional.ofNullable(passiveBecause),
                        service.successesInARow(), service.failuresInARow(), service.succeeded(), service.failed(),
                        service.last()));
    }
}
