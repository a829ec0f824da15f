package dev.mcpd.delivery;

import dev.mcpd.http.Http2Windows;
import io.vertx.core.AsyncResult;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.camel.Exchange;
import org.apache.camel.component.vertx.http.DefaultVertxHttpBinding;
import org.apache.camel.component.vertx.http.VertxHttpEndpoint;

/**
 * How camel-vertx-http sends a delivery attempt: to the upstream the failover load balancer chose, with the stored
 * request's method and its target exactly as stored (Camel's own binding re-parses the query into a map, which would
 * reorder and re-encode it), on a client of that upstream's own. The client speaks HTTP/2 when the upstream's probe
 * showed it does ({@link UpstreamOffer}: h2c with prior knowledge or by upgrade on {@code http://}, ALPN on
 * {@code https://}), so a window shares a few connections; otherwise, and until a probe has answered, it keeps
 * HTTP/1.1 connections alive, as many as the window may need. (Vert.x's HTTP/2 client caps its connections at its
 * HTTP/2 pool size even when an upgrade is refused and they stay HTTP/1.1, so "ask for HTTP/2 and see" would leave a
 * window of 256 three connections to an HTTP/1.1 server: the probe asks instead.) The HTTP version of each answer is
 * told to the {@link UpstreamBoard}.
 */
public final class UpstreamHttpBinding extends DefaultVertxHttpBinding {

    static final int CONNECT_TIMEOUT_MS = 5_000;
    /** An HTTP/2 server takes at least 100 streams at once on one connection, so few connections carry a window. */
    static final int STREAMS_PER_CONNECTION = 100;
    static final int IDLE_CONNECTION_SECONDS = 60;

    private final UpstreamBoard board;
    private final int maxInFlight;
    private final Map<String, WebClient> clients = new ConcurrentHashMap<>();
    private final UpstreamTls upstreamTls;

    public UpstreamHttpBinding(UpstreamBoard board, int maxInFlight, UpstreamTls tls) {
        this.board = board;
        this.maxInFlight = maxInFlight;
        this.upstreamTls = tls;
    }

    @Override
    public HttpRequest<Buffer> prepareHttpRequest(VertxHttpEndpoint endpoint, Exchange exchange) {
        Upstream upstream = DeliveryExchange.upstream(exchange);
        URI url = URI.create(DeliveryExchange.url(exchange));
        boolean tls = "https".equalsIgnoreCase(url.getScheme());
        String target = url.getRawPath() + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
        RequestOptions options = new RequestOptions().setHost(url.getHost())
                .setPort(url.getPort() >= 0 ? url.getPort() : tls ? 443 : 80).setSsl(tls).setURI(target);
        UpstreamOffer.Http2 http2 = board.offer(upstream).http2();
        WebClient client = clients.computeIfAbsent(upstream.order() + " " + http2, key -> {
            WebClient made = WebClient.create(endpoint.getComponent().getVertx(), upstreamTls.applyTo(clientOptions(http2)));
            // New files (a renewed client certificate, a new CA) for new connections; open ones keep theirs.
            upstreamTls.onChange(ssl -> made.updateSSLOptions(ssl, true));
            return made;
        });
        Shipment shipment = DeliveryExchange.shipment(exchange);
        HttpMethod method = shipment.batch() ? HttpMethod.POST : HttpMethod.valueOf(shipment.first().request().method());
        HttpRequest<Buffer> request = client.request(method, options);
        populateRequestHeaders(endpoint, exchange, request, endpoint.getConfiguration().getHeaderFilterStrategy());
        if (endpoint.getConfiguration().getTimeout() > -1) {
            request.timeout(endpoint.getConfiguration().getTimeout());
        }
        return request;
    }

    private WebClientOptions clientOptions(UpstreamOffer.Http2 http2) {
        boolean h2 = http2 != UpstreamOffer.Http2.NONE;
        return new WebClientOptions()
                .setProtocolVersion(h2 ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1)
                .setHttp2ClearTextUpgrade(http2 == UpstreamOffer.Http2.UPGRADE)
                .setUseAlpn(h2)
                .setMaxPoolSize(maxInFlight)
                .setHttp2MaxPoolSize(Math.max(1, (maxInFlight + STREAMS_PER_CONNECTION - 1) / STREAMS_PER_CONNECTION))
                .setKeepAlive(true)
                .setPipelining(false)
                .setConnectTimeout(CONNECT_TIMEOUT_MS)
                .setIdleTimeout(IDLE_CONNECTION_SECONDS)
                .setDecompressionSupported(false)
                .setTryUseCompression(false)
                .setFollowRedirects(false)
                .setUserAgent("mcpd-relay")
                // The answers to a window of batches come back on a few connections (Http2Windows).
                .setHttp2ConnectionWindowSize(Http2Windows.CONNECTION)
                .setInitialSettings(new Http2Settings().setInitialWindowSize(Http2Windows.STREAM));
    }

    @Override
    public void handleResponse(VertxHttpEndpoint endpoint, Exchange exchange,
                               AsyncResult<HttpResponse<Buffer>> response) throws Exception {
        if (response.succeeded()) {
            board.answeredWith(DeliveryExchange.upstream(exchange),
                    response.result().version() == HttpVersion.HTTP_2 ? "h2" : "h1");
        }
        super.handleResponse(endpoint, exchange, response);
    }

    /** Closes the upstreams' clients and their connections. */
    public void close() {
        clients.values().forEach(WebClient::close);
        clients.clear();
    }
}
