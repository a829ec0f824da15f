package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePattern;
import org.apache.camel.Processor;
import org.apache.camel.support.DefaultConsumer;
import org.apache.camel.support.SynchronizationAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ships the spool: {@code workers} delivery lanes each take the oldest entry not yet out (waking as soon as one is
 * committed — no poll period) and start it through the route. A lane is busy only until its entry's request is sent:
 * the route waits for an upstream and a place in its window on the lane, then the request crosses the link
 * asynchronously and the lane takes the next entry. When the exchange completes — whichever thread its answer came
 * back on — the entry is removed from the spool (delivered, or kept in dead/) or given back (retried elsewhere, the
 * relay is stopping, or something failed that is not the upstream's answer). An entry is never out twice at once.
 */
final class SpoolConsumer extends DefaultConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(SpoolConsumer.class);
    /** How long a lane waits for an entry before it checks whether it should stop. */
    private static final Duration TAKE_WAIT = Duration.ofMillis(250);
    /** An entry that failed unexpectedly goes out again only after this, so a broken entry cannot spin. */
    private static final Duration AFTER_FAULT = Duration.ofSeconds(1);
    /** How long a stop waits for requests in flight to be answered before it gives up on them. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    private final Spool spool;
    private final int workers;
    private final DeliveryWorkers busy;
    private final DeliveryBudget budget;
    private final long maxBodyBytes;
    private final AtomicInteger inFlight = new AtomicInteger();
    private ExecutorService lanes;
    private ScheduledExecutorService later;

    SpoolConsumer(SpoolEndpoint endpoint, Processor processor, Spool spool, int workers, DeliveryWorkers busy,
                  DeliveryBudget budget, long maxBodyBytes) {
        super(endpoint, processor);
        this.spool = spool;
        this.workers = workers;
        this.busy = busy;
        this.budget = budget;
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        var executors = getEndpoint().getCamelContext().getExecutorServiceManager();
        later = executors.newSingleThreadScheduledExecutor(this, "delivery-retry");
        lanes = executors.newFixedThreadPool(this, "delivery", workers);
        for (int i = 0; i < workers; i++) {
            lanes.execute(this::work);
        }
    }

    private void work() {
        while (isRunAllowed() && !isSuspendingOrSuspended()) {
            try {
                // Room for the largest entry first, so that reading the next one never passes the budget.
                if (!budget.take(maxBodyBytes, TAKE_WAIT)) {
                    continue;
                }
                Optional<SpoolEntry> entry;
                try {
                    entry = spool.next(TAKE_WAIT);
                } catch (IOException | RuntimeException e) {
                    budget.give(maxBodyBytes);
                    throw e;
                }
                if (entry.isEmpty()) {
                    budget.give(maxBodyBytes);
                    continue;
                }
                long size = entry.get().request().body().length;
                budget.give(maxBodyBytes - size);
                busy.started();
                try {
                    start(entry.get(), size);
                } finally {
                    busy.finished();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | RuntimeException e) {
                LOG.error("delivery lane could not take the next entry: {}", e.toString());
                pause();
            }
        }
    }

    private void start(SpoolEntry entry, long size) {
        Exchange exchange = createExchange(false);
        exchange.setPattern(ExchangePattern.InOnly);
        DeliveryExchange.setEntry(exchange, entry);
        exchange.getExchangeExtension().addOnCompletion(new EntryCompletion(entry.seq(), size));
        inFlight.incrementAndGet();
        // The callback only counts: what happens to the entry is decided when the exchange completes (EntryCompletion).
        getAsyncProcessor().process(exchange, doneSync -> {
            if (inFlight.decrementAndGet() == 0) {
                synchronized (inFlight) {
                    inFlight.notifyAll();
                }
            }
        });
    }

    /** Removes the entry from the spool or gives it back, once its exchange has completed. */
    private final class EntryCompletion extends SynchronizationAdapter {
        private final long seq;
        private final long size;

        EntryCompletion(long seq, long size) {
            this.seq = seq;
            this.size = size;
        }

        @Override
        public void onComplete(Exchange exchange) {
            budget.give(size);
            try {
                spool.done(seq);
            } catch (IOException | RuntimeException e) {
                LOG.error("seq={} was delivered but could not be removed from the spool: {}", seq, e.toString());
            }
        }

        @Override
        public void onFailure(Exchange exchange) {
            budget.give(size);
            Exception failure = exchange.getException();
            if (failure instanceof RetryElsewhere || failure instanceof DeliveryStopped) {
                spool.release(seq);
                return;
            }
            LOG.error("delivery of seq={} failed and it stays in the spool: {}", seq, String.valueOf(failure));
            ScheduledExecutorService scheduler = later;
            if (scheduler == null || scheduler.isShutdown()) {
                spool.release(seq);
            } else {
                scheduler.schedule(() -> spool.release(seq), AFTER_FAULT.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private void pause() {
        try {
            Thread.sleep(AFTER_FAULT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    protected void doStop() throws Exception {
        var executors = getEndpoint().getCamelContext().getExecutorServiceManager();
        if (lanes != null) {
            // Lanes see isRunAllowed() turn false and start no new entry; entries waiting for an upstream or a place
            // in its window give up (DeliveryStopped) and stay in the spool.
            lanes.shutdown();
            if (!lanes.awaitTermination(STOP_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                lanes.shutdownNow();
            }
            executors.shutdown(lanes);
            lanes = null;
        }
        // Requests already sent get their answers, so what an upstream took is not sent again after a restart.
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        synchronized (inFlight) {
            for (long left = STOP_WAIT.toMillis(); inFlight.get() > 0 && left > 0;
                 left = (deadline - System.nanoTime()) / 1_000_000) {
                inFlight.wait(left);
            }
        }
        if (inFlight.get() > 0) {
            LOG.warn("stopping with {} deliveries unanswered: they stay in the spool and are sent again", inFlight.get());
        }
        if (later != null) {
            executors.shutdown(later);
            later = null;
        }
        super.doStop();
    }
}
