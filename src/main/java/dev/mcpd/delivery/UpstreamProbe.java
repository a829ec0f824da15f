package dev.mcpd.delivery;

import dev.mcpd.http.RelayBatch;
import dev.mcpd.http.RequestTarget;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Asks every upstream whether it is ready ({@code GET <upstream>/readyz}, all at once, each within
 * {@link #TIMEOUT}) and tells the {@link UpstreamBoard}. Run by the probe-upstreams route every 5 seconds, so that
 * readiness and {@code mcpd_relay_upstream_up} reflect upstreams that take no traffic (a secondary, or a primary
 * while the spool is empty).
 *
 * <p>The probe also finds out whether HTTP/2 can carry deliveries ({@link UpstreamOffer}): it asks for HTTP/2 — by
 * {@code Upgrade: h2c} on {@code http://}, a body-less GET being the request an upgrade is made for, and by ALPN on
 * {@code https://} — and reads the {@code Mcpd-Capabilities} header an mcpd collector answers with.
 */
public final class UpstreamProbe implements Processor {

    static final Duration TIMEOUT = Duration.ofSeconds(2);
    static final String PATH = "/readyz";

    private final UpstreamBoard board;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
            .connectTimeout(TIMEOUT).build();

    public UpstreamProbe(UpstreamBoard board) {
        this.board = board;
    }

    @Override
    public void process(Exchange exchange) {
        List<CompletableFuture<Void>> probes = new ArrayList<>();
        for (Upstream upstream : board.upstreams()) {
            long started = System.nanoTime();
            HttpRequest request = HttpRequest.newBuilder(probeUrl(upstream)).timeout(TIMEOUT).GET().build();
            probes.add(http.sendAsync(request, HttpResponse.BodyHandlers.discarding())
                    .handle((response, failure) -> {
                        Duration latency = Duration.ofNanos(System.nanoTime() - started);
                        // What it offers first: a probe that ends a wait wakes the lanes, which then pack for it.
                        if (failure == null) {
                            board.offers(upstream, offerOf(response));
                        }
                        board.probed(upstream, failure == null ? OptionalInt.of(response.statusCode())
                                : OptionalInt.empty(), latency);
                        return null;
                    }));
        }
        CompletableFuture.allOf(probes.toArray(new CompletableFuture[0])).join();
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

    private static URI probeUrl(Upstream upstream) {
        try {
            return URI.create(upstream.urlFor(PATH));
        } catch (RequestTarget.InvalidTarget e) {
            throw new IllegalStateException(PATH + " is a valid target", e);
        }
    }
}
