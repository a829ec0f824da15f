package dev.mcpd.http;

import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The memory HTTP/2 streams hold, and the clients that never take their answers. A client that never opens its
 * streams' flow-control windows (its {@code SETTINGS_INITIAL_WINDOW_SIZE} 0, no {@code WINDOW_UPDATE}) gets every
 * answer's headers and none of its body: the stream stays open and the server holds it with its answer, some 4 KiB of
 * heap, for as long as the connection lives — and the connection is never idle, since the client keeps opening
 * streams. Measured before this existed: 900 such connections of 100 streams ran a relay with a 256 MiB heap out of
 * memory, with or without an ingest key.
 *
 * <p>So every HTTP/2 stream counts {@link #COST_PER_STREAM} bytes against a budget of an eighth of the heap, from its
 * request to its close (when its answer's last byte left). A stream that arrives when the budget is spent is refused
 * at once ({@code RST_STREAM REFUSED_STREAM}: nothing of it was processed, and clients send it again, on this
 * connection or another). A connection is closed (GOAWAY, then the socket) when one of its answers has waited longer
 * than the idle timeout, or waits at all while the budget is three quarters spent: its memory comes back at once, and
 * a line goes to the log (rate-limited). Clients that take their answers give their share back as soon as each is
 * sent. The request bodies' own budget ({@link BodyBudget}) is apart: such clients cannot make honest bodies wait.
 *
 * <p>Vert.x says when a stream closed ({@code HttpServerResponse.closed()}) but gives each answer a single close
 * handler, which the routes use; so a connection's streams are looked at by a timer on its own event loop, which runs
 * only while it has streams open, and once more right after each answer is written and flushed.
 */
final class UnreadAnswers {

    /** What one open stream is counted as: about twice the heap measured per stream held with its answer. */
    static final long COST_PER_STREAM = BodyBudget.PER_REQUEST;
    /** How often a connection's streams are looked at while any is open. */
    static final long CHECK_MILLIS = 500;
    /** The share of the heap open streams may hold: an eighth. */
    static final int HEAP_SHARE = 8;

    private final BodyBudget budget;
    private final long patienceNanos;
    private final FrontDoor.RefusalLog log;
    private final Map<HttpConnection, Watched> watched = new ConcurrentHashMap<>();

    UnreadAnswers(BodyBudget budget, Duration patience, FrontDoor.RefusalLog log) {
        this.budget = budget;
        this.patienceNanos = patience.toNanos();
        this.log = log;
    }

    /** Open streams may hold an eighth of this JVM's heap; an answer may wait {@code patience}. */
    static UnreadAnswers forHeap(Duration patience, FrontDoor.RefusalLog log) {
        return new UnreadAnswers(new BodyBudget(Runtime.getRuntime().maxMemory() / HEAP_SHARE), patience, log);
    }

    /** {@code next}, for each HTTP/2 stream the budget has room for; each watched until its answer is sent. */
    Handler<HttpServerRequest> watching(Handler<HttpServerRequest> next) {
        return request -> {
            if (request.version() != HttpVersion.HTTP_2) {
                next.handle(request);
                return;
            }
            if (!watch(request)) {
                return;
            }
            next.handle(request);
            if (request.response().ended()) {
                answered(request); // at the door: a refusal, or "starting"
            }
        };
    }

    /**
     * The answer to {@code request} was just written: its connection's streams are looked at once the event loop has
     * flushed what it wrote — an answer a client takes has left by then, and its stream's share comes back.
     */
    void answered(HttpServerRequest request) {
        if (request.version() != HttpVersion.HTTP_2) {
            return;
        }
        Watched connection = watched.get(request.connection());
        if (connection != null) {
            connection.checkSoon();
        }
    }

    /** Bytes counted for open streams now (for tests). */
    long held() {
        return budget.held();
    }

    /** Connections with a stream open (for tests). */
    int connectionsWatched() {
        return watched.size();
    }

    /** Counts the stream, or refuses it when the budget has no room: whether it may go on. */
    private boolean watch(HttpServerRequest request) {
        Context context = Vertx.currentContext();
        if (context == null) {
            return true; // not on an event loop: nothing to run the checks on (never, for a request Vert.x hands over)
        }
        HttpConnection connection = request.connection();
        // Requests and checks of one connection all run on its event loop: a Watched is never touched concurrently.
        Watched streams = watched.computeIfAbsent(connection, c -> new Watched(c, context));
        if (!budget.tryTake(COST_PER_STREAM)) {
            request.response().reset(REFUSED_STREAM);
            if (streams.anyWaiting()) {
                streams.close("the memory for open streams is spent, and this client takes none of its answers");
            } else {
                log.refused("STREAMS_AT_BOUND", "refused an HTTP/2 stream: open streams hold the memory they may ("
                        + (budget.capacity() >> 20) + " MiB); the client sends it again remote=" + remote(connection));
                streams.forgetIfEmpty();
            }
            return false;
        }
        streams.add(request);
        return true;
    }

    /** RST_STREAM's code for a stream refused before any of it was processed (RFC 9113 section 8.7). */
    private static final long REFUSED_STREAM = 7;

    private static String remote(HttpConnection connection) {
        return connection.remoteAddress() == null ? "-" : connection.remoteAddress().host();
    }

    private final class Watched {
        private final HttpConnection connection;
        private final Context context;
        private final List<Stream> streams = new ArrayList<>();
        private long timer = -1;
        private boolean checkPending;

        Watched(HttpConnection connection, Context context) {
            this.connection = connection;
            this.context = context;
        }

        void add(HttpServerRequest request) {
            streams.add(new Stream(request.response()));
            if (timer < 0) {
                timer = context.owner().setPeriodic(CHECK_MILLIS, fired -> check());
            }
        }

        /** Looks at the streams once the event loop has run what it queued (the writes and their flush). */
        void checkSoon() {
            if (!checkPending) {
                checkPending = true;
                context.runOnContext(later -> {
                    checkPending = false;
                    if (timer >= 0) { // still watched: not emptied and forgotten meanwhile
                        check();
                    }
                });
            }
        }

        boolean anyWaiting() {
            for (Stream stream : streams) {
                if (stream.response.ended() && !stream.response.closed()) {
                    return true;
                }
            }
            return false;
        }

        private void check() {
            long now = System.nanoTime();
            boolean scarce = budget.held() > budget.capacity() / 4 * 3;
            String closeFor = null;
            Iterator<Stream> each = streams.iterator();
            while (each.hasNext()) {
                Stream stream = each.next();
                if (stream.response.closed()) {
                    each.remove();
                    budget.give(COST_PER_STREAM);
                } else if (closeFor == null && stream.response.ended()) {
                    if (stream.waitingSince == 0) {
                        stream.waitingSince = now;
                    }
                    if (scarce) {
                        closeFor = "the memory for open streams is short, and this client takes none of its answers";
                    } else if (now - stream.waitingSince > patienceNanos) {
                        closeFor = "an answer was not taken within " + patienceNanos / 1_000_000_000 + " s (its"
                                + " stream's flow-control window stays closed)";
                    }
                }
            }
            if (closeFor != null) {
                close(closeFor);
            }
            forgetIfEmpty();
        }

        /** Closes the connection; its streams close with it, and the next check gives their share back. */
        void close(String why) {
            long waiting = streams.stream().filter(s -> s.response.ended() && !s.response.closed()).count();
            log.refused("UNREAD_ANSWERS", "closed an HTTP/2 connection reason=\"" + why + "\" waiting=" + waiting
                    + " remote=" + remote(connection));
            connection.close();
        }

        void forgetIfEmpty() {
            if (streams.isEmpty()) {
                if (timer >= 0) {
                    context.owner().cancelTimer(timer);
                    timer = -1;
                }
                watched.remove(connection);
            }
        }
    }

    private static final class Stream {
        final HttpServerResponse response;
        /** When a check first saw its answer written and not sent (System.nanoTime()), or 0. */
        long waitingSince;

        Stream(HttpServerResponse response) {
            this.response = response;
        }
    }
}
