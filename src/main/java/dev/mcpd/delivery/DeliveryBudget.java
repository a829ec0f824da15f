package dev.mcpd.delivery;

import java.time.Duration;

/**
 * How many body bytes the entries out for delivery may hold in memory at once. A window of 256 requests in flight to
 * each upstream would otherwise let 16 MiB entries hold gigabytes; with the budget, a delivery lane waits for room
 * before it reads the next entry (it reserves one largest body, then gives back what the entry it read does not
 * need), and an entry's bytes come back when its exchange completes.
 *
 * <p>The budget is a sixteenth of the maximum heap ({@link #HEAP_SHARE}: 32 MiB of a 512 MiB heap, some 30 000 entries of
 * 1 KiB, far more than any link's window needs) and never less than one body of {@code --max-body-bytes}, so the largest
 * entry can always go alone. Each batch or merged OTLP request in flight holds its framing or merged body (and its
 * gzipped copy) besides, at most {@code --batch-max-bytes} of decoded bodies: with a quarter of the heap, a drain of a
 * large backlog filled the old generation to 400 MiB.
 */
public final class DeliveryBudget {

    static final int HEAP_SHARE = 16;

    private final long capacity;
    private long held;

    DeliveryBudget(long capacity) {
        this.capacity = capacity;
    }

    public static DeliveryBudget forHeap(long maxBodyBytes) {
        return new DeliveryBudget(Math.max(maxBodyBytes, Runtime.getRuntime().maxMemory() / HEAP_SHARE));
    }

    /** Takes {@code bytes}, waiting up to {@code maxWait} for room; false (nothing taken) when none came. */
    synchronized boolean take(long bytes, Duration maxWait) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (held + Math.min(bytes, capacity) > capacity) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        held += bytes;
        return true;
    }

    synchronized void give(long bytes) {
        held -= bytes;
        notifyAll();
    }

    public long capacity() {
        return capacity;
    }

    /** Bytes held now. */
    public synchronized long held() {
        return held;
    }
}
