package dev.mcpd.collector;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.http.ProbeAnswer;
import dev.mcpd.store.JdbcStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * {@code /readyz} of a collector: 200 {@code ok} while the store answers a trivial query in time (and its Kafka source,
 * if any, can be reached: else 200 {@code degraded}); 503 when it does not answer within {@link #STORE_TIMEOUT},
 * however it hangs and however many probes ask at once. It waits: the route runs it on a worker ({@code OnWorker}).
 */
public final class CollectorReadiness implements Supplier<ProbeAnswer.Verdict> {

    static final Duration STORE_TIMEOUT = InternalTuning.DEFAULT.storeCheckTimeout();

    private final JdbcStore store;
    private final Supplier<Optional<String>> sourceUnreachable;

    public CollectorReadiness(JdbcStore store) {
        this(store, Optional::empty);
    }

    /** @param sourceUnreachable what keeps the Kafka source from its records, said of it, while something does */
    CollectorReadiness(JdbcStore store, Supplier<Optional<String>> sourceUnreachable) {
        this.store = store;
        this.sourceUnreachable = sourceUnreachable;
    }

    /**
     * The store's check: one at a time on a thread of its own, which probes share. A query's own timeout is not
     * enough: the driver cancels through the server, and a server that is frozen (or a network that drops every
     * packet) answers neither the query nor the cancel — the query then waits for ever.
     */
    private final ThreadPoolExecutor checker = idleEnding(new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), runnable -> {
                Thread thread = new Thread(runnable, "mcpd-store-check");
                thread.setDaemon(true);
                return thread;
            }));

    /** Its thread ends after 10 s without a check: nothing stays behind a collector that stopped. */
    private static ThreadPoolExecutor idleEnding(ThreadPoolExecutor executor) {
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }
    private CompletableFuture<Optional<String>> check = CompletableFuture.completedFuture(Optional.empty());

    /** What keeps the store from answering now: the check in flight, or a new one, waited for at most its time. */
    private Optional<String> storeProblem() {
        CompletableFuture<Optional<String>> current;
        synchronized (this) {
            if (check.isDone()) {
                check = CompletableFuture.supplyAsync(() -> store.problem(STORE_TIMEOUT), checker);
            }
            current = check;
        }
        try {
            return current.get(STORE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return Optional.of("no answer within " + STORE_TIMEOUT.toSeconds() + " s");
        } catch (ExecutionException e) {
            return Optional.of(e.getCause().toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    @Override
    public ProbeAnswer.Verdict get() {
        Optional<String> problem = storeProblem();
        if (problem.isPresent()) {
            return new ProbeAnswer.Verdict(503, "unavailable: the store does not answer: " + problem.get());
        }
        // HTTP ingest still works: the collector stays in the load balancer's pool, and says what is wrong.
        return sourceUnreachable.get().map(what -> new ProbeAnswer.Verdict(200, "degraded: the Kafka source " + what))
                .orElseGet(() -> new ProbeAnswer.Verdict(200, "ok"));
    }
}
