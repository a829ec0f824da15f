package dev.mcpd.delivery;

import dev.mcpd.config.McpdVersion;
import dev.mcpd.config.UpstreamProbeAddress;
import dev.mcpd.logs.RootCause;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamOffer;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import io.netty.channel.ConnectTimeoutException;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Checks every upstream: {@code GET <upstream><--probe-path>} with
 * {@code User-Agent: mcpd-relay-health-check/<version>}, each within {@code --probe-timeout-seconds}, and tells the
 * {@link UpstreamBoard} — a 2xx in time is a successful check; 404, 405 or 501 is no check at all (the path is not
 * served there: its deliveries alone say how it is); anything else (refused, reset, another status, no answer in time)
 * a failed one, with its reason. Run by the probe-upstreams route every {@code --probe-interval-seconds};
 * the upstreams are spread over the part of the interval the timeout leaves free, with a little jitter, so several
 * relays' checks (and one relay's of several upstreams) do not all land at once.
 *
 * <p>The probe also finds out whether HTTP/2 can carry deliveries ({@link UpstreamOffer}): it asks for HTTP/2 — by
 * {@code Upgrade: h2c} on {@code http://}, a body-less GET being the request an upgrade is made for, and by ALPN on
 * {@code https://} — and reads the {@code Mcpd-Capabilities} header an mcpd collector answers with. The checks go
 * through delivery's own HTTP stack ({@link UpstreamHttp#check}): the same Vert.x client settings and TLS files.
 *
 * <p>A Kafka upstream is checked by asking its brokers for its topic's metadata instead: it succeeds when they
 * describe the topic within the timeout.
 */
public final class UpstreamProbe implements Processor {

    public static final String USER_AGENT = "mcpd-relay-health-check/" + McpdVersion.VERSION;
    /** Answers that say the probe path is not served there, not that the upstream is unwell. */
    static final Set<Integer> NOT_SERVED = Set.of(404, 405, 501);
    /** How long delivery waits at start for an upstream's first check to say what it speaks. */
    static final Duration FIRST_ANSWER_WAIT = Duration.ofSeconds(2);

    private final UpstreamBoard board;
    private final KafkaUpstreams kafka;
    private final String path;
    /** Upstreams checked elsewhere than at their own {@code --probe-path}, or not at all, by order. */
    private final Map<Integer, UpstreamProbeAddress> addresses = new HashMap<>();
    private final Duration timeout;
    private final Duration interval;
    private final UpstreamHttp http;
    /** Known from the first round on: the context the HTTP stack finds its Vert.x in. */
    private volatile CamelContext camel;
    /** The upstreams (by order) whose check is out now. */
    private final Set<Integer> checking = ConcurrentHashMap.newKeySet();
    /** The first round checks every upstream at once: delivery waits for it to know what each speaks. */
    private volatile boolean firstRound = true;

    public UpstreamProbe(UpstreamBoard board, String path, List<UpstreamProbeAddress> addresses, Duration timeout,
                         Duration interval, UpstreamHttp http, KafkaUpstreams kafka) {
        this.board = board;
        this.kafka = kafka;
        this.path = path;
        for (UpstreamProbeAddress address : addresses) {
            this.addresses.put(address.order(), address);
        }
        for (Upstream upstream : board.upstreams()) {
            if (addresses.stream().anyMatch(a -> a.order() == upstream.order() && a.url().isEmpty())) {
                board.notProbed(upstream);
            }
        }
        this.timeout = timeout;
        this.interval = interval;
        this.http = http;
        board.whenOfferUnknown(this::checkNow);
    }

    @Override
    public void process(Exchange exchange) {
        camel = exchange.getContext();
        List<Upstream> upstreams = board.upstreams();
        // The free part of the interval, shared out among the upstreams, each a little later or sooner at random.
        long spread = firstRound ? 0 : Math.max(0, interval.minus(timeout).toMillis()) / Math.max(1, upstreams.size());
        firstRound = false;
        // The round does not wait for its checks: the timer's thread is never held by an upstream that does not
        // answer, and a stop does not wait for one either.
        for (int i = 0; i < upstreams.size(); i++) {
            Upstream upstream = upstreams.get(i);
            UpstreamProbeAddress address = addresses.get(upstream.order());
            if (address != null && address.url().isEmpty()) {
                continue; // not probed: its deliveries are its checks
            }
            if (!checking.add(upstream.order())) {
                continue; // its last check is still out (it ends within the timeout): not two at once
            }
            long offset = i * spread + (spread > 1 ? ThreadLocalRandom.current().nextLong(spread / 2) : 0);
            CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(offset, TimeUnit.MILLISECONDS))
                    .thenCompose(started -> probe(upstream))
                    .whenComplete((checked, failure) -> checking.remove(upstream.order()));
        }
    }

    /**
     * Checks one upstream now, out of the round: one that took a delivery before any check said what it offers (it
     * was unreachable at the last round), so that its entries go in batches from now rather than from the next round.
     * Nothing when it is checked elsewhere or not at all (its offer stays unknown), or a check of it is out already.
     */
    void checkNow(Upstream upstream) {
        if (camel == null || addresses.containsKey(upstream.order()) || !checking.add(upstream.order())) {
            return;
        }
        probe(upstream).whenComplete((checked, failure) -> checking.remove(upstream.order()));
    }

    private CompletableFuture<Void> probe(Upstream upstream) {
        long started = System.nanoTime();
        if (upstream.isKafka() && !addresses.containsKey(upstream.order())) {
            // A topic is in service while its metadata can be fetched from its brokers.
            return kafka.topicCheck(upstream, timeout).thenAccept(failure -> board.probed(upstream,
                    OptionalInt.empty(), Duration.ofNanos(System.nanoTime() - started), failure.orElse("")));
        }
        UpstreamProbeAddress address = addresses.get(upstream.order());
        URI url = address == null ? probeUrl(upstream) : address.url().orElseThrow();
        return http.check(camel, upstream, url, USER_AGENT, timeout).handle((answer, failure) -> {
            Duration latency = Duration.ofNanos(System.nanoTime() - started);
            // What it offers first: a probe that ends a wait wakes the lanes, which then pack for it.
            if (failure == null) {
                if (address == null) { // checked elsewhere, the answer comes from another server: it offers nothing
                    board.offers(upstream, offerOf(answer, upstream.tls()));
                }
                if (NOT_SERVED.contains(answer.status())) {
                    board.probedPassively(upstream, answer.status(), "GET " + (address == null ? path
                            : url.toString()));
                    return null;
                }
            }
            OptionalInt status = failure == null ? OptionalInt.of(answer.status()) : OptionalInt.empty();
            board.probed(upstream, status, latency, failureOf(status, latency, failure));
            return null;
        });
    }

    /** Why the check failed, in a few words; "" when it succeeded (a 2xx within the timeout). */
    private String failureOf(OptionalInt status, Duration latency, Throwable failure) {
        if (failure != null) {
            Throwable cause = RootCause.of(failure);
            // Netty's connect timeout is a ConnectException: asked first.
            return cause instanceof TimeoutException || cause instanceof ConnectTimeoutException
                    ? "no answer within " + timeout.toMillis() + " ms"
                    : cause instanceof ConnectException ? "connection refused"
                    : TlsFailure.explain(failure).orElse("no answer: " + cause.getClass().getSimpleName());
        }
        if (status.getAsInt() / 100 != 2) {
            return "answered " + status.getAsInt();
        }
        if (latency.compareTo(timeout) > 0) {
            return "answered " + status.getAsInt() + " after " + latency.toMillis() + " ms, past the "
                    + timeout.toMillis() + " ms timeout";
        }
        return "";
    }

    /** What an answer to a check of an upstream (over TLS or not) shows it offers. */
    static UpstreamOffer offerOf(UpstreamHttp.CheckAnswer answer, boolean tls) {
        List<String> capabilities = answer.capabilities();
        UpstreamOffer.Http2 http2;
        if (capabilities.contains("h2c") || answer.http2() && tls) {
            http2 = UpstreamOffer.Http2.PRIOR_KNOWLEDGE;
        } else if (answer.http2()) {
            http2 = UpstreamOffer.Http2.UPGRADE;
        } else {
            http2 = UpstreamOffer.Http2.NONE;
        }
        return new UpstreamOffer(http2, capabilities.contains(RelayBatch.CAPABILITY));
    }

    private URI probeUrl(Upstream upstream) {
        try {
            return URI.create(upstream.urlFor(path));
        } catch (RequestTarget.InvalidTarget e) {
            throw new IllegalStateException("--probe-path " + path + " is checked at start", e);
        }
    }
}
