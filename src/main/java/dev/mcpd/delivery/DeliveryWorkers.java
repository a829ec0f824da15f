package dev.mcpd.delivery;

import java.util.concurrent.atomic.AtomicInteger;

/** How many delivery workers there are and how many are busy with an entry right now. */
public final class DeliveryWorkers {

    private final int total;
    private final AtomicInteger busy = new AtomicInteger();

    public DeliveryWorkers(int total) {
        this.total = total;
    }

    public int total() {
        return total;
    }

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
