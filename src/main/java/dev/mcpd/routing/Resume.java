package dev.mcpd.routing;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;

/**
 * How a step that has to wait — for a request body, for the spool's commit, for an entry's fate — waits without
 * blocking an event loop: on an event loop, the step returns at once and the route resumes on that same event loop
 * once the wait is over (so every step of a request runs on its connection's thread); on any other thread (a worker
 * of platform-http's own engine, Camel JBang, a test), the thread waits in place, as a blocking step would.
 */
public final class Resume {

    /** What the step does with the outcome of the wait, on the thread the route resumes on. */
    @FunctionalInterface
    public interface Then<T> {
        /** {@code failure} is the cause the wait failed with, or null; an exception thrown fails the exchange. */
        void apply(T value, Throwable failure) throws Exception;
    }

    /** Work that may block: a file written and forced, an operator's route. */
    @FunctionalInterface
    public interface Blocking {
        void run() throws Exception;
    }

    private Resume() {
    }

    /** True when the calling thread must not block: an event loop. */
    public static boolean onEventLoop() {
        return Context.isOnEventLoopThread();
    }

    /**
     * Continues the exchange once {@code wait} completes, as {@link org.apache.camel.AsyncProcessor#process} does:
     * returns true when it is done already (the callback was called on this thread), false when the route resumes
     * later on this event loop.
     */
    public static <T> boolean after(CompletableFuture<T> wait, Exchange exchange, AsyncCallback callback,
                                    Then<T> then) {
        if (wait.isDone() || !onEventLoop()) {
            T value = null;
            Throwable failure = null;
            try {
                value = wait.get();
            } catch (ExecutionException e) {
                failure = e.getCause();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = e;
            }
            apply(then, value, failure, exchange);
            callback.done(true);
            return true;
        }
        Context loop = Vertx.currentContext();
        wait.whenComplete((value, failure) -> loop.runOnContext(unused -> {
            apply(then, value, unwrap(failure), exchange);
            callback.done(false);
        }));
        return false;
    }

    /**
     * Runs {@code work}, which may block, without blocking an event loop: called on an event loop, it runs on a worker
     * thread and the route resumes on this event loop once it is done; called elsewhere, it runs in place. An
     * exception it throws fails the exchange.
     */
    public static boolean blocking(Exchange exchange, AsyncCallback callback, Blocking work) {
        if (!onEventLoop()) {
            try {
                work.run();
            } catch (Exception e) {
                exchange.setException(e);
            }
            callback.done(true);
            return true;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        Vertx.currentContext().owner().executeBlocking(() -> {
            work.run();
            return null;
        }, false).onComplete(ran -> {
            if (ran.succeeded()) {
                done.complete(null);
            } else {
                done.completeExceptionally(ran.cause());
            }
        });
        return after(done, exchange, callback, (unused, failure) -> {
            if (failure instanceof Exception e) {
                throw e;
            }
            if (failure instanceof Error e) {
                throw e;
            }
        });
    }

    private static <T> void apply(Then<T> then, T value, Throwable failure, Exchange exchange) {
        try {
            then.apply(value, failure);
        } catch (Exception e) {
            exchange.setException(e);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
