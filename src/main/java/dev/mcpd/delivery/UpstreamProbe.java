package dev.mcpd.delivery;

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
 */
public final class UpstreamProbe implements Processor {

    static final Duration TIMEOUT = Duration.ofSeconds(2);
    static final String PATH = "/readyz";

    private final UpstreamBoard board;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
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
                        board.probed(upstream, failure == null ? OptionalInt.of(response.statusCode())
                                : OptionalInt.empty(), latency);
                        return null;
                    }));
        }
        CompletableFuture.allOf(probes.toArray(new CompletableFuture[0])).join();
    }

    private static URI probeUrl(Upstream upstream) {
        try {
            return URI.create(upstream.urlFor(PATH));
        } catch (RequestTarget.InvalidTarget e) {
            throw new IllegalStateException(PATH + " is a valid target", e);
        }
    }
}
