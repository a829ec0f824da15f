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
 * Answers an HTTP/2 client has not taken. A client that never opens its streams' flow-control windows (its
 * {@code SETTINGS_INITIAL_WINDOW_SIZE} 0, no {@code WINDOW_UPDATE}) gets every answer's headers and none of its body:
 * the stream stays open and the server holds it with its answer, some 4 KiB of heap, for as long as the connection
 * lives — and the connection is never idle, since the client keeps opening streams. Measured before this existed:
 * 900 such connections of 100 streams ran a relay with a 256 MiB heap out of memory, with or without an ingest key.
 *
 * <p>So every HTTP/2 answer is watched from its request to its stream's close (when its last byte left). One still
 * waiting at a check ({@link #CHECK_MILLIS}) counts {@link #COST_PER_ANSWER} bytes against a budget of an eighth of
 * the heap of its own — not the request bodies' budget, so that such clients cannot make honest senders' bodies wait.
 * A connection is closed (GOAWAY, then the socket) when one of its answers does not fit in that budget, or has waited
 * longer than the idle timeout: its memory is given back at once, and a line goes to the log (rate-limited). Clients
 * that read their answers are never counted: their streams are closed before a check comes.
 *
 * <p>Vert.x says when a stream closed ({@code HttpServerResponse.closed()}) but gives each answer a single close
 * handler, which the routes use; so the answers are looked at by a timer on the connection's own event loop, which
 * runs only while the connection has answers not yet sent.
 */
final class UnreadAnswers {

    /** What one waiting answer is counted as: what its request was, in flight. */
    static final long COST_PER_ANSWER = BodyBudget.PER_REQUEST;
    /** How often a connection's answers are looked at while any is not sent. */
    static final long CHECK_MILLIS = 500;
    /** The share of the heap waiting answers may hold: an eighth. */
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

    /** Answers waiting may hold an eighth of this JVM's heap; one may wait {@code patience}. */
    static UnreadAnswers forHeap(Duration patience, FrontDoor.RefusalLog log) {
        return new UnreadAnswers(new BodyBudget(Runtime.getRuntime().maxMemory() / HEAP_SHARE), patience, log);
    }

    /** {@code next}, with each HTTP/2 request's answer watched until it is sent. */
    Handler<HttpServerRequest> watching(Handler<HttpServerRequest> next) {
        return request -> {
            if (request.version() == HttpVersion.HTTP_2) {
                watch(request);
            }
            next.handle(request);
        };
    }

    /** Bytes counted for answers waiting now (for tests). */
    long held() {
        return budget.held();
    }

    /** Connections with an answer not yet sent (for tests). */
    int connectionsWatched() {
        return watched.size();
    }

    private void watch(HttpServerRequest request) {
        Context context = Vertx.currentContext();
        if (context == null) {
            return; // not on an event loop: nothing to run the checks on (never, for a request Vert.x hands over)
        }
        HttpConnection connection = request.connection();
        // Requests and checks of one connection all run on its event loop: a Watched is never touched concurrently.
        watched.computeIfAbsent(connection, c -> new Watched(c, context)).add(request);
    }

    private final class Watched {
        private final HttpConnection connection;
        private final Context context;
        private final List<Answer> answers = new ArrayList<>();
        private long timer = -1;

        Watched(HttpConnection connection, Context context) {
            this.connection = connection;
            this.context = context;
        }

        void add(HttpServerRequest request) {
            answers.add(new Answer(request.response()));
            if (timer < 0) {
                timer = context.owner().setPeriodic(CHECK_MILLIS, fired -> check());
            }
        }

        private void check() {
            long now = System.nanoTime();
            Iterator<Answer> each = answers.iterator();
            String closeFor = null;
            while (each.hasNext()) {
                Answer answer = each.next();
                if (answer.response.closed()) {
                    each.remove();
                    answer.release();
                } else if (closeFor == null && answer.response.ended()) {
                    if (!answer.seenWaiting) {
                        answer.seenWaiting = true;
                        answer.waitingSince = now;
                        if (!budget.tryTake(COST_PER_ANSWER)) {
                            closeFor = "the memory for answers clients have not taken is spent";
                        } else {
                            answer.charged = true;
                        }
                    } else if (now - answer.waitingSince > patienceNanos) {
                        closeFor = "an answer was not taken within " + patienceNanos / 1_000_000_000 + " s (its"
                                + " stream's flow-control window stays closed)";
                    }
                }
            }
            if (closeFor != null) {
                log.refused("UNREAD_ANSWERS", "closed an HTTP/2 connection reason=\"" + closeFor + "\" waiting="
                        + waiting() + " remote="
                        + (connection.remoteAddress() == null ? "-" : connection.remoteAddress().host()));
                connection.close(); // its streams close with it, and the next check gives their memory back
            }
            if (answers.isEmpty()) {
                context.owner().cancelTimer(timer);
                timer = -1;
                watched.remove(connection);
            }
        }

        private long waiting() {
            return answers.stream().filter(answer -> answer.response.ended()).count();
        }
    }

    private final class Answer {
        final HttpServerResponse response;
        boolean seenWaiting;
        long waitingSince;
        boolean charged;

        Answer(HttpServerResponse response) {
            this.response = response;
        }

        void release() {
            if (charged) {
                budget.give(COST_PER_ANSWER);
                charged = false;
            }
        }
    }
}
