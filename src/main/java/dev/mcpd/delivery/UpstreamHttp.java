package dev.mcpd.delivery;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.logs.RootCause;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamOffer;
import dev.mcpd.wire.Http2Windows;
import io.netty.handler.codec.http2.Http2Exception;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.impl.VertxInternal;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.camel.AsyncCallback;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;
import org.apache.camel.support.CamelContextHelper;

/**
 * Sends one attempt over HTTP, on Vert.x's HTTP client: the {@link OutgoingRequest} to the upstream and target the
 * failover chose, and the answer — status, {@code Content-Type}, {@code Retry-After}, a body of at most
 * {@link #MAX_ANSWER_BYTES} — as an {@link UpstreamAnswer} on the exchange. It never fails the exchange: a refused
 * connection or a timeout is an answer too, for the failover to judge.
 *
 * <p>Each upstream has clients of its own (one per way of speaking HTTP/2 that its probe showed, see
 * {@link UpstreamOffer}: h2c with prior knowledge or by upgrade on {@code http://}, ALPN on {@code https://}, else
 * HTTP/1.1 keep-alive connections, as many as its window may need), and all its requests are made and answered on
 * one event loop. The health checks go through here too ({@link #check}): one HTTP stack, one TLS. Why not
 * camel-vertx-http: it hands every answer to a worker thread (an ordered
 * {@code executeBlocking}) and copies every header both ways through a header filter; measured, those hand-offs were
 * most of what a delivery cost (bench/profile.sh).
 */
public final class UpstreamHttp extends AsyncProcessorSupport {

    /** An HTTP/2 server takes at least 100 streams at once on one connection, so few connections carry a window. */
    static final int STREAMS_PER_CONNECTION = 100;
    static final int IDLE_CONNECTION_SECONDS = 60;
    /**
     * How much of an answer's body is read: a batch's answer is a few bytes per entry, a dead letter keeps its first
     * KiB. Past it the attempt fails, retryably, and the connection is closed.
     */
    static final int MAX_ANSWER_BYTES = 1 << 20;

    private final UpstreamBoard board;
    private final int maxInFlight;
    private final UpstreamTls tls;
    private final Duration timeout;
    private final Map<String, Client> clients = new ConcurrentHashMap<>();
    private volatile Vertx vertx;
    private volatile boolean ownVertx;

    /**
     * A client of one upstream and the one context its requests are sent from: all of an upstream's delivery runs on
     * one event loop. Spread over every loop, delivery fell behind accept at saturation (11 500 accepted, 5 200
     * delivered per second): sharing a loop with its half of the senders is what paces accept to delivery.
     */
    private record Client(HttpClient http, Context context) {
    }

    /**
     * @param timeout no byte of an answer for this long, or no whole answer this long after the request was written:
     *                the attempt fails (a timeout), and goes elsewhere
     */
    public UpstreamHttp(UpstreamBoard board, int maxInFlight, UpstreamTls tls, Duration timeout) {
        this.board = board;
        this.maxInFlight = maxInFlight;
        this.tls = tls;
        this.timeout = timeout;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        Upstream upstream = DeliveryExchange.upstream(exchange);
        OutgoingRequest out = DeliveryExchange.request(exchange);
        UpstreamOffer.Http2 http2 = board.offer(upstream).http2();
        Client client = clientFor(exchange.getContext(), upstream, http2);
        RequestOptions options = new RequestOptions().setMethod(out.method()).setHost(upstream.host())
                .setPort(upstream.port()).setSsl(upstream.tls()).setURI(DeliveryExchange.target(exchange))
                .setHeaders(out.headers()).setIdleTimeout(timeout.toMillis());
        Once done = new Once(exchange, callback);
        if (http2 == UpstreamOffer.Http2.PRIOR_KNOWLEDGE && !upstream.tls()) {
            done.onFailure(failure -> {
                if (prefaceRefused(failure)) {
                    board.prefaceRefused(upstream, RootCause.of(failure).getMessage());
                }
            });
        }
        client.context().runOnContext(unused -> send(client.http(), options, out.body(), upstream, done));
        return false;
    }

    private void send(HttpClient http, RequestOptions options, Buffer body, Upstream upstream, Once done) {
        http.request(options).onComplete(made -> {
            if (made.failed()) {
                done.answer(UpstreamAnswer.failed(made.cause()));
                return;
            }
            HttpClientRequest request = made.result();
            boolean[] due = {false}; // both callbacks run on the client's event loop
            Runnable answerDue = () -> {
                if (!due[0]) {
                    due[0] = true;
                    awaitWholeAnswer(request, done);
                }
            };
            request.response().onComplete(answered -> {
                if (answered.failed()) {
                    done.answer(UpstreamAnswer.failed(answered.cause()));
                    return;
                }
                answerDue.run(); // an upstream may answer before it read the body, and then never read it
                read(request, answered.result(), upstream, done);
            });
            request.end(body).onSuccess(written -> answerDue.run());
        });
    }

    /**
     * The idle timeout alone lets an answer that drips a byte now and then hold its entry for ever: once the request
     * is written or the answer begun, whichever comes first, the whole answer must come within the timeout, or the
     * attempt is a timeout (and the stream or connection is reset). Writing the request itself is bounded by the idle
     * timeout: a large body on a slow link takes as long as it needs while it moves.
     */
    private void awaitWholeAnswer(HttpClientRequest request, Once done) {
        if (done.finished()) {
            return;
        }
        long timer = vertx.setTimer(timeout.toMillis(), fired -> {
            TimeoutException late = new TimeoutException("no whole answer within " + timeout.toMillis()
                    + " ms of the request");
            if (done.answer(UpstreamAnswer.failed(late))) {
                request.reset(0, late);
            }
        });
        done.onFinish(() -> vertx.cancelTimer(timer));
    }

    private void read(HttpClientRequest request, HttpClientResponse response, Upstream upstream, Once done) {
        board.answeredWith(upstream, response.version() == HttpVersion.HTTP_2 ? "h2" : "h1");
        Buffer body = Buffer.buffer();
        response.exceptionHandler(failed -> done.answer(UpstreamAnswer.failed(failed)));
        response.handler(chunk -> {
            if (done.finished()) {
                return;
            }
            if (body.length() + chunk.length() > MAX_ANSWER_BYTES) {
                done.answer(UpstreamAnswer.failed(new AnswerTooLarge()));
                request.connection().close();
                return;
            }
            body.appendBuffer(chunk);
        });
        response.endHandler(ended -> done.answer(new UpstreamAnswer(response.statusCode(),
                response.getHeader("Content-Type"), response.getHeader("Retry-After"),
                body.length() == 0 ? UpstreamAnswer.NO_BODY : body.getBytes(), null)));
    }

    /**
     * The connection was answered in something other than HTTP/2 (Netty checks the server's first frame is its
     * SETTINGS): an HTTP/1.1 server answers the preface with an HTTP/1.1 status line.
     */
    private static boolean prefaceRefused(Throwable failure) {
        Throwable root = RootCause.of(failure);
        return root instanceof Http2Exception && String.valueOf(root.getMessage())
                .startsWith("First received frame was not SETTINGS");
    }

    /** An answer larger than {@link #MAX_ANSWER_BYTES}: not one a collector gives. */
    static final class AnswerTooLarge extends IOException {
        AnswerTooLarge() {
            super("answer larger than " + (MAX_ANSWER_BYTES >> 10) + " KiB");
        }
    }

    /**
     * Completes the exchange once, with the first answer or failure (a late exception after the end is ignored).
     * Used on the client's event loop only.
     */
    private static final class Once {
        private final Exchange exchange;
        private final AsyncCallback callback;
        private boolean finished;
        private Runnable onFinish;
        private Consumer<Throwable> onFailure = failure -> { };

        Once(Exchange exchange, AsyncCallback callback) {
            this.exchange = exchange;
            this.callback = callback;
        }

        boolean finished() {
            return finished;
        }

        void onFinish(Runnable action) {
            onFinish = action;
        }

        void onFailure(Consumer<Throwable> action) {
            onFailure = action;
        }

        /** True when this was the first answer, the one the exchange carries. */
        boolean answer(UpstreamAnswer answer) {
            if (finished) {
                return false;
            }
            finished = true;
            if (onFinish != null) {
                onFinish.run();
            }
            if (answer.failure() != null) {
                onFailure.accept(answer.failure());
            }
            DeliveryExchange.setAnswer(exchange, answer);
            callback.done(false);
            return true;
        }
    }

    /**
     * What a health check reads of an answer.
     *
     * @param http2        whether it came over HTTP/2
     * @param capabilities the {@code Mcpd-Capabilities} an mcpd collector names, as one list
     */
    record CheckAnswer(int status, boolean http2, List<String> capabilities) {
    }

    /**
     * One health check of {@code upstream}: {@code GET url}, asking for HTTP/2 — by {@code Upgrade: h2c} on
     * {@code http://} (a body-less GET is the request an upgrade is made for), by ALPN on {@code https://} — on the
     * same Vert.x, TLS files and client settings as its deliveries, so what a check finds it speaks is what carries
     * them. The whole answer (its body read and dropped) must come within {@code timeout}: else the future fails with
     * a {@link TimeoutException}, and the stream is reset.
     */
    CompletableFuture<CheckAnswer> check(CamelContext camel, Upstream upstream, URI url, String userAgent,
                                         Duration timeout) {
        Client client = clients.computeIfAbsent(upstream.order() + " check", key -> made(camel,
                checkOptions(timeout)));
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.GET).setAbsoluteURI(url.toString())
                .putHeader("User-Agent", userAgent).setIdleTimeout(timeout.toMillis());
        CompletableFuture<CheckAnswer> answer = new CompletableFuture<>();
        client.context().runOnContext(unused -> client.http().request(options).onComplete(made -> {
            if (made.failed()) {
                answer.completeExceptionally(made.cause());
                return;
            }
            HttpClientRequest request = made.result();
            long timer = vertx.setTimer(timeout.toMillis(), fired -> {
                TimeoutException late = new TimeoutException("no whole answer within " + timeout.toMillis() + " ms");
                if (answer.completeExceptionally(late)) {
                    request.reset(0, late);
                }
            });
            answer.whenComplete((done, failure) -> vertx.cancelTimer(timer));
            request.send().onComplete(sent -> {
                if (sent.failed()) {
                    answer.completeExceptionally(sent.cause());
                    return;
                }
                HttpClientResponse response = sent.result();
                response.exceptionHandler(answer::completeExceptionally);
                response.handler(chunk -> { }); // the body says nothing a check reads
                response.endHandler(ended -> answer.complete(new CheckAnswer(response.statusCode(),
                        response.version() == HttpVersion.HTTP_2, response.headers()
                        .getAll(UpstreamOffer.CAPABILITIES_HEADER).stream()
                        .flatMap(value -> Arrays.stream(value.trim().split("[\\s,]+"))).toList())));
            });
        }));
        return answer;
    }

    private Client clientFor(CamelContext camel, Upstream upstream, UpstreamOffer.Http2 http2) {
        return clients.computeIfAbsent(upstream.order() + " " + http2, key -> made(camel, clientOptions(http2)));
    }

    private Client made(CamelContext camel, HttpClientOptions options) {
        Vertx on = vertx(camel);
        HttpClient made = on.createHttpClient(tls.applyTo(options));
        // New files (a renewed client certificate, a new CA) for new connections; open ones keep theirs.
        tls.onChange(ssl -> made.updateSSLOptions(ssl, true));
        return new Client(made, ((VertxInternal) on).createEventLoopContext());
    }

    /** A check's client: one connection, HTTP/2 asked for both ways, connecting within the check's own timeout. */
    private static HttpClientOptions checkOptions(Duration timeout) {
        return new HttpClientOptions()
                .setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(true)
                .setUseAlpn(true)
                .setMaxPoolSize(1)
                .setHttp2MaxPoolSize(1)
                .setKeepAlive(true)
                .setConnectTimeout(Math.toIntExact(timeout.toMillis()))
                .setIdleTimeout(IDLE_CONNECTION_SECONDS)
                .setIdleTimeoutUnit(TimeUnit.SECONDS)
                .setDecompressionSupported(false)
                .setTryUseCompression(false);
    }

    /** The Vert.x instance the listener runs on (or, where none is in the registry, one of delivery's own). */
    private Vertx vertx(CamelContext camel) {
        if (vertx == null) {
            synchronized (this) {
                if (vertx == null) {
                    Vertx found = CamelContextHelper.findSingleByType(camel, Vertx.class);
                    ownVertx = found == null;
                    vertx = found != null ? found : Vertx.vertx();
                }
            }
        }
        return vertx;
    }

    private HttpClientOptions clientOptions(UpstreamOffer.Http2 http2) {
        boolean h2 = http2 != UpstreamOffer.Http2.NONE;
        return new HttpClientOptions()
                .setProtocolVersion(h2 ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1)
                .setHttp2ClearTextUpgrade(http2 == UpstreamOffer.Http2.UPGRADE)
                .setUseAlpn(h2)
                .setMaxPoolSize(maxInFlight)
                .setHttp2MaxPoolSize(Math.max(1, (maxInFlight + STREAMS_PER_CONNECTION - 1) / STREAMS_PER_CONNECTION))
                .setKeepAlive(true)
                .setPipelining(false)
                .setConnectTimeout(Math.toIntExact(InternalTuning.DEFAULT.connectTimeout().toMillis()))
                .setIdleTimeout(IDLE_CONNECTION_SECONDS)
                .setIdleTimeoutUnit(TimeUnit.SECONDS)
                .setDecompressionSupported(false)
                .setTryUseCompression(false)
                // The answers to a window of batches come back on a few connections (Http2Windows).
                .setHttp2ConnectionWindowSize(Http2Windows.CONNECTION)
                .setInitialSettings(new Http2Settings().setInitialWindowSize(Http2Windows.STREAM));
    }

    @Override
    protected void doStop() {
        clients.values().forEach(client -> client.http().close());
        clients.clear();
        if (ownVertx && vertx != null) {
            vertx.close();
        }
    }
}
