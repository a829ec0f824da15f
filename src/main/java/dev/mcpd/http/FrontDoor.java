package dev.mcpd.http;

import dev.mcpd.logs.SenderText;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * The first look at every request on the listener, before any route: what HTTP's framing rules (RFC 9112) say a
 * server must refuse, refused here, once, for the probes as for ingest — so that a front proxy and mcpd can never
 * disagree on where one request ends and the next begins (request smuggling).
 * <ul>
 *   <li>{@code Transfer-Encoding}: only {@code chunked}, once, is understood. A coding list that does not end in
 *       {@code chunked} is 400 (section 6.3: the length cannot be known), {@code chunked} given twice is 400 (section 7), any other
 *       coding ({@code gzip, chunked}, {@code xchunked}…) is 501 (section 6.1) — each with the connection closed, since the
 *       bytes after the head cannot be framed. A request with both {@code Content-Length} and
 *       {@code Transfer-Encoding} is served (the chunks frame it) and its connection is closed after the answer
 *       (section 6.3). Netty's HTTP decoder drops the {@code Content-Length} of a chunked request before the server sees
 *       the request, so the two cannot be told apart here: the connection of every chunked HTTP/1.1 request closes
 *       after its answer (OpenTelemetry SDKs and agents send a {@code Content-Length}; a chunked sender reconnects).</li>
 *   <li>{@code Host}: two are 400; an HTTP/1.1 (or HTTP/2) request without a valid one is 400. HTTP/1.0 does not
 *       require one (load balancers' HTTP/1.0 health checks send none) and is served.</li>
 *   <li>The request target must be an absolute path or an http(s) URL: {@code *}, {@code v1/x}, {@code @host/x} are
 *       400 here, answered in one line, not Vert.x's 404 with an ERROR and a stack trace per request.</li>
 *   <li>A request that arrives on a connection already marked by {@link #closeAfterAnswer} (pipelined behind a
 *       request refused before its body was read) is not served: the connection closes.</li>
 * </ul>
 * Installed around the listener's request handler by the Vert.x instance {@code mcpd relay} and {@code mcpd serve}
 * listen on; not under Camel JBang, whose server exists before mcpd's configuration runs.
 */
public final class FrontDoor implements Handler<HttpServerRequest> {

    /** Where a refusal is logged: by its kind (a fixed word), then the line. */
    @FunctionalInterface
    public interface RefusalLog {
        void refused(String kind, String line);
    }

    /** Connections to close after their current answer; weakly held, so a connection gone is forgotten. */
    private static final Set<HttpConnection> CLOSING = Collections.synchronizedSet(
            Collections.newSetFromMap(new WeakHashMap<>()));

    /** A refused request's body is drained until no byte of it came for this long... */
    static final long LINGER_IDLE_MILLIS = 1_000;
    /** ...and at most this long in all. */
    static final long LINGER_MAX_MILLIS = 5_000;
    private static final long LINGER_CHECK_MILLIS = 250;

    private final Handler<HttpServerRequest> next;
    private final RefusalLog log;

    private FrontDoor(Handler<HttpServerRequest> next, RefusalLog log) {
        this.next = next;
        this.log = log;
    }

    /** {@code next}, behind the front door. */
    public static Handler<HttpServerRequest> before(Handler<HttpServerRequest> next, RefusalLog log) {
        return next == null ? null : new FrontDoor(next, log);
    }

    /**
     * Closes the HTTP/1.x connection once the answer to {@code request} is written, and serves nothing more that
     * arrives on it: bytes of an unread body, or a request pipelined behind, never become a request.
     */
    public static void closeAfterAnswer(HttpServerRequest request) {
        if (request.version() == HttpVersion.HTTP_2) {
            return; // a stream ends by itself; the connection carries other senders' streams
        }
        HttpConnection connection = request.connection();
        CLOSING.add(connection);
        HttpServerResponse response = request.response();
        response.putHeader("Connection", "close");
        response.endHandler(done -> lingerThenClose(request, connection));
    }

    /**
     * Closes once the rest of the request's body has been read (and dropped), once no byte of it came for
     * {@link #LINGER_IDLE_MILLIS}, or after {@link #LINGER_MAX_MILLIS} at most. A sender still sending its body when
     * the connection closes under it gets a reset, and most clients then report the reset rather than the answer (a
     * 503 they would have retried, a 413 they should have seen); so, like nginx's lingering close, the body is drained
     * a moment first. Dropped bytes cost no memory.
     */
    private static void lingerThenClose(HttpServerRequest request, HttpConnection connection) {
        var context = Vertx.currentContext();
        if (request.isEnded() || context == null) {
            connection.close();
            return;
        }
        long started = System.nanoTime();
        long[] lastByte = {started};
        request.handler(dropped -> lastByte[0] = System.nanoTime());
        request.endHandler(ended -> connection.close());
        request.exceptionHandler(failed -> connection.close());
        request.resume();
        context.owner().setPeriodic(LINGER_CHECK_MILLIS, timer -> {
            long now = System.nanoTime();
            if (now - lastByte[0] >= LINGER_IDLE_MILLIS * 1_000_000 || now - started >= LINGER_MAX_MILLIS * 1_000_000) {
                context.owner().cancelTimer(timer);
                connection.close();
            }
        });
    }

    @Override
    public void handle(HttpServerRequest request) {
        if (request.version() != HttpVersion.HTTP_2 && CLOSING.contains(request.connection())) {
            request.connection().close();
            return;
        }
        Refusal refusal = refusalOf(request);
        if (refusal != null) {
            refuse(request, refusal);
            return;
        }
        if (request.version() != HttpVersion.HTTP_2 && request.headers().contains("Transfer-Encoding")) {
            // Netty's decoder removes the Content-Length of a chunked request before anyone sees it, so a request
            // that carried both cannot be told from one that did not: every chunked request's connection closes.
            closeAfterAnswer(request);
        }
        next.handle(request);
    }

    private record Refusal(int status, String kind, String reason) {
    }

    private static Refusal refusalOf(HttpServerRequest request) {
        if (request.version() != HttpVersion.HTTP_2) {
            Refusal coding = transferCodingRefusal(request.headers().getAll("Transfer-Encoding"));
            if (coding != null) {
                return coding;
            }
            if (request.headers().getAll("Host").size() > 1) {
                return new Refusal(400, "BAD_FRAMING", "a request carries one Host header, not several");
            }
        }
        if (request.version() != HttpVersion.HTTP_1_0 && request.authority() == null) {
            return new Refusal(400, "BAD_FRAMING", "a Host header naming host[:port] is required");
        }
        String target = request.uri();
        if (target.isEmpty() || (target.charAt(0) != '/' && !isAbsoluteForm(target))) {
            return new Refusal(400, "BAD_TARGET", "the request target must be an absolute path (/…) or an http(s)"
                    + " URL");
        }
        return null;
    }

    /** RFC 9112 sections 6.1, 6.3 and 7: {@code chunked} last and once, and no coding mcpd cannot decode. */
    static Refusal transferCodingRefusal(List<String> headerValues) {
        if (headerValues.isEmpty()) {
            return null;
        }
        List<String> codings = headerValues.stream()
                .flatMap(value -> Arrays.stream(value.split(",")))
                .map(coding -> coding.strip().toLowerCase(Locale.ROOT))
                .filter(coding -> !coding.isEmpty())
                .toList();
        if (codings.isEmpty() || !codings.get(codings.size() - 1).equals("chunked")) {
            return new Refusal(400, "BAD_FRAMING", "Transfer-Encoding must end with chunked: the body's length"
                    + " cannot be told otherwise");
        }
        if (codings.stream().filter("chunked"::equals).count() > 1) {
            return new Refusal(400, "BAD_FRAMING", "Transfer-Encoding names chunked more than once");
        }
        if (codings.size() > 1) {
            return new Refusal(501, "BAD_FRAMING", "a transfer coding other than chunked is not implemented: send"
                    + " the body chunked, or with a Content-Length (Content-Encoding for compression)");
        }
        return null;
    }

    private static boolean isAbsoluteForm(String target) {
        String lower = target.length() > 8 ? target.substring(0, 8).toLowerCase(Locale.ROOT) : target.toLowerCase(
                Locale.ROOT);
        return lower.startsWith("http://") || lower.startsWith("https://");
    }

    private void refuse(HttpServerRequest request, Refusal refusal) {
        log.refused(refusal.kind(), "refused status=" + refusal.status() + " reason=\"" + refusal.reason()
                + "\" method=" + SenderText.quote(request.method().name()) + " path=\""
                + SenderText.quote(request.uri()) + "\" remote="
                + (request.remoteAddress() == null ? "-" : request.remoteAddress().host()));
        closeAfterAnswer(request);
        HttpServerResponse response = request.response();
        response.setStatusCode(refusal.status()).putHeader("Content-Type", "text/plain; charset=utf-8")
                .end(refusal.reason() + "\n");
        // What may still come of the body is read and dropped until the connection closes.
        request.handler(ignored -> { });
        request.exceptionHandler(ignored -> { });
    }
}
