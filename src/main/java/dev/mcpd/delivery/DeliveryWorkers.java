package dev.mcpd.delivery;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many delivery workers there are and how many are busy with an entry right now. The number is {@code --workers}
 * until the spool endpoint's consumer starts its lanes: then it is the number it runs (its {@code workers} option).
 */
public final class DeliveryWorkers implements WorkerLoad {

    private volatile int total;
    private final AtomicInteger busy = new AtomicInteger();

    /** @param configured {@code --workers}: the lanes a {@code from: spool:relay} runs unless it says otherwise */
    public DeliveryWorkers(int configured) {
        this.total = configured;
    }

    /** The lanes the consumer started. */
    void running(int lanes) {
        this.total = lanes;
    }

    @Override
    public int total() {
        return total;
    }

    @Override
    public int busy() {
        return busy.get();
    }

    void started() {
        busy.incrementAndGet();
    }

    void finished() {
        busy.decrementAndGet();
    }
}
