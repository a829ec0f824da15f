package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePattern;
import org.apache.camel.Processor;
import org.apache.camel.support.DefaultConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ships the spool: {@code workers} threads each take the oldest entry not yet out (waking as soon as one is
 * committed — no poll period), run it through the route, and then either remove it from the spool (the route ended
 * without an exception: delivered, or kept in dead/) or give it back (the relay is stopping, or something failed
 * that is not the upstream's answer). An entry is never out to two workers at once.
 */
final class SpoolConsumer extends DefaultConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(SpoolConsumer.class);
    /** How long a worker waits for an entry before it checks whether it should stop. */
    private static final Duration TAKE_WAIT = Duration.ofMillis(250);
    /** Pause after an unexpected failure, so a broken entry cannot spin a worker. */
    private static final Duration AFTER_FAULT = Duration.ofSeconds(1);

    private final Spool spool;
    private final int workers;
    private final DeliveryWorkers busy;
    private ExecutorService executor;

    SpoolConsumer(SpoolEndpoint endpoint, Processor processor, Spool spool, int workers, DeliveryWorkers busy) {
        super(endpoint, processor);
        this.spool = spool;
        this.workers = workers;
        this.busy = busy;
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        executor = getEndpoint().getCamelContext().getExecutorServiceManager()
                .newFixedThreadPool(this, "delivery", workers);
        for (int i = 0; i < workers; i++) {
            executor.execute(this::work);
        }
    }

    private void work() {
        while (isRunAllowed() && !isSuspendingOrSuspended()) {
            try {
                Optional<SpoolEntry> entry = spool.next(TAKE_WAIT);
                if (entry.isPresent()) {
                    busy.started();
                    try {
                        deliver(entry.get());
                    } finally {
                        busy.finished();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | RuntimeException e) {
                LOG.error("delivery worker could not take the next entry: {}", e.toString());
                pause();
            }
        }
    }

    private void deliver(SpoolEntry entry) throws IOException {
        Exchange exchange = createExchange(false);
        exchange.setPattern(ExchangePattern.InOnly);
        DeliveryExchange.setEntry(exchange, entry);
        try {
            getProcessor().process(exchange);
        } catch (Exception e) {
            exchange.setException(e);
        }
        Exception failure = exchange.getException();
        releaseExchange(exchange, false);
        if (failure == null) {
            spool.done(entry.seq());
            return;
        }
        spool.release(entry.seq());
        if (!(failure instanceof DeliveryStopped)) {
            LOG.error("delivery of seq={} failed and it stays in the spool: {}", entry.seq(), failure.toString());
            pause();
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
        if (executor != null) {
            // Workers see isRunAllowed() turn false and finish the entry in hand; entries waiting for an upstream
            // give up their wait (DeliveryStopped) and stay in the spool.
            executor.shutdown();
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
            getEndpoint().getCamelContext().getExecutorServiceManager().shutdown(executor);
            executor = null;
        }
        super.doStop();
    }
}
