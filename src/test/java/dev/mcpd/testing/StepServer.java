package dev.mcpd.testing;

import dev.mcpd.http.IngestRefusal;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.component.platform.http.vertx.HttpMessage;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;

/**
 * A real Vert.x HTTP server on a loopback port that runs ingest steps — the {@link Processor}s of the front door —
 * on each request it gets, as platform-http would: a {@link DefaultExchange} whose message is an {@link HttpMessage}
 * over the Vert.x request. What the steps did (passed, or refused with which {@link IngestRefusal}) is kept, with the
 * exchange, for the test to read ({@link #next()}); the sender gets a plain {@code 200 ran} (with any header a step put
 * on the response). No route, no relay: a unit test of the steps, on real requests.
 *
 * <p>The steps run on the request's head unless {@link #readingBody} is asked, when the body is read first and
 * becomes the message body (a byte array), as the body reader would leave it. An asynchronous step (the body reader
 * itself) runs as a route runs it: the request is paused until it reads, and the next step runs once it calls back.
 */
public final class StepServer implements AutoCloseable {

    /** What the steps did with one request. */
    public record Outcome(Exchange exchange, IngestRefusal refusal, Exception failure) {
        public boolean passed() {
            return refusal == null && failure == null;
        }

        /** The refusal; fails the test when the steps passed or failed otherwise. */
        public IngestRefusal refused() {
            if (refusal == null) {
                throw new AssertionError("expected a refusal; the steps " + (failure == null ? "passed"
                        : "failed with " + failure));
            }
            return refusal;
        }
    }

    private final Vertx vertx = Vertx.vertx();
    private final DefaultCamelContext camel = new DefaultCamelContext();
    private final BlockingQueue<Outcome> outcomes = new LinkedBlockingQueue<>();
    private final HttpServer server;
    private volatile List<Processor> steps = List.of();
    private volatile boolean readBody;

    private StepServer(Handler<HttpServerRequest> handler) {
        try {
            server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
                    .requestHandler(handler == null ? this::handle : handler)
                    .listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            vertx.close();
            throw new IllegalStateException("the step server did not start", e);
        }
    }

    /** A server that runs {@code steps}, in order, on each request's head. */
    public static StepServer running(Processor... steps) {
        StepServer server = new StepServer(null);
        server.steps = List.of(steps);
        return server;
    }

    /** A server whose requests go to {@code handler} (a Vert.x handler under test, such as the front door). */
    public static StepServer handledBy(Handler<HttpServerRequest> handler) {
        return new StepServer(handler);
    }

    /** From now on, each request's body is read before the steps run, and is the exchange's body. */
    public StepServer readingBody() {
        readBody = true;
        return this;
    }

    public int port() {
        return server.actualPort();
    }

    /** What the steps did with the next request, in the order requests came; fails after 10 s without one. */
    public Outcome next() throws InterruptedException {
        Outcome outcome = outcomes.poll(10, TimeUnit.SECONDS);
        if (outcome == null) {
            throw new AssertionError("no request reached the steps within 10 s");
        }
        return outcome;
    }

    /** Whether a request reached the steps and is not yet read by {@link #next}. */
    public boolean anyReached() {
        return !outcomes.isEmpty();
    }

    private void handle(HttpServerRequest request) {
        DefaultExchange exchange = new DefaultExchange(camel);
        exchange.setIn(new HttpMessage(exchange, request, request.response()));
        if (readBody) {
            request.body().onSuccess(body -> {
                exchange.getIn().setBody(body.getBytes());
                run(request, exchange, 0);
            });
        } else {
            if (steps.stream().anyMatch(AsyncProcessor.class::isInstance)) {
                request.pause();
            }
            run(request, exchange, 0);
        }
    }

    private void run(HttpServerRequest request, Exchange exchange, int from) {
        Outcome outcome;
        try {
            for (int i = from; i < steps.size(); i++) {
                if (steps.get(i) instanceof AsyncProcessor async) {
                    int next = i + 1;
                    async.process(exchange, doneSync -> {
                        if (exchange.getException() == null) {
                            run(request, exchange, next);
                        } else {
                            answer(request, outcome(exchange, exchange.getException()));
                        }
                    });
                    return;
                }
                steps.get(i).process(exchange);
            }
            outcome = new Outcome(exchange, null, null);
        } catch (Exception e) {
            outcome = outcome(exchange, e);
        }
        answer(request, outcome);
    }

    private static Outcome outcome(Exchange exchange, Exception failure) {
        return failure instanceof IngestRefusal refusal ? new Outcome(exchange, refusal, null)
                : new Outcome(exchange, null, failure);
    }

    private void answer(HttpServerRequest request, Outcome outcome) {
        // Done before the answer is written: once the sender has it, next() has the outcome.
        outcomes.add(outcome);
        boolean unread = !request.isEnded() && request.version() != HttpVersion.HTTP_2;
        if (unread) {
            request.response().putHeader("Connection", "close");
        }
        request.response().setStatusCode(200).putHeader("Content-Type", "text/plain").end("ran\n")
                .onComplete(done -> {
                    if (unread) {
                        request.connection().close();
                    }
                });
    }

    @Override
    public void close() throws Exception {
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            camel.close();
        }
    }
}
