package dev.mcpd.delivery;

import dev.mcpd.config.McpdVersion;
import dev.mcpd.config.UpstreamProbeAddress;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamOffer;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * {@code https://} — and reads the {@code Mcpd-Capabilities} header an mcpd collector answers with.
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
    private volatile HttpClient http;
    /** The upstreams (by order) whose check is out now. */
    private final Set<Integer> checking = ConcurrentHashMap.newKeySet();
    /** The first round checks every upstream at once: delivery waits for it to know what each speaks. */
    private volatile boolean firstRound = true;

    public UpstreamProbe(UpstreamBoard board, String path, List<UpstreamProbeAddress> addresses, Duration timeout,
                         Duration interval, UpstreamTls tls, KafkaUpstreams kafka) {
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
        if (tls.configured()) {
            // Checked with the files delivery uses; a client made again when they change (the JDK's keeps its own).
            this.http = client(tls.sslContext(context -> http = client(context)));
        } else {
            this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).connectTimeout(timeout).build();
        }
        board.whenOfferUnknown(this::checkNow);
    }

    private HttpClient client(javax.net.ssl.SSLContext context) {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).connectTimeout(timeout).sslContext(context)
                .build();
    }

    @Override
    public void process(Exchange exchange) {
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
        if (addresses.containsKey(upstream.order()) || !checking.add(upstream.order())) {
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
        HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout)
                .header("User-Agent", USER_AGENT).GET().build();
        CompletableFuture<HttpResponse<Void>> exchange = http.sendAsync(request, HttpResponse.BodyHandlers.discarding());
        // The client's own timeout bounds the answer's head only: an answer whose body never ends is bounded here,
        // and the exchange given up (its connection closed).
        return exchange.copy().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).handle((response, failure) -> {
            if (failure != null) {
                exchange.cancel(true);
            }
            Duration latency = Duration.ofNanos(System.nanoTime() - started);
            // What it offers first: a probe that ends a wait wakes the lanes, which then pack for it.
            if (failure == null) {
                if (address == null) { // checked elsewhere, the answer comes from another server: it offers nothing
                    board.offers(upstream, offerOf(response));
                }
                if (NOT_SERVED.contains(response.statusCode())) {
                    board.probedPassively(upstream, response.statusCode(), "GET " + (address == null ? path
                            : url.toString()));
                    return null;
                }
            }
            OptionalInt status = failure == null ? OptionalInt.of(response.statusCode()) : OptionalInt.empty();
            board.probed(upstream, status, latency, failureOf(status, latency, failure));
            return null;
        });
    }

    /** Why the check failed, in a few words; "" when it succeeded (a 2xx within the timeout). */
    private String failureOf(OptionalInt status, Duration latency, Throwable failure) {
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            return cause instanceof HttpTimeoutException || cause instanceof TimeoutException
                    ? "no answer within " + timeout.toMillis() + " ms"
                    : cause instanceof ConnectException ? "connection refused"
                    : TlsFailure.explain(cause).orElse("no answer: " + cause.getClass().getSimpleName());
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

    static UpstreamOffer offerOf(HttpResponse<?> answer) {
        List<String> capabilities = answer.headers().allValues(UpstreamOffer.CAPABILITIES_HEADER).stream()
                .flatMap(value -> java.util.Arrays.stream(value.trim().split("[\\s,]+"))).toList();
        UpstreamOffer.Http2 http2;
        if (capabilities.contains("h2c") || answer.version() == HttpClient.Version.HTTP_2
                && "https".equalsIgnoreCase(answer.uri().getScheme())) {
            http2 = UpstreamOffer.Http2.PRIOR_KNOWLEDGE;
        } else if (answer.version() == HttpClient.Version.HTTP_2) {
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
