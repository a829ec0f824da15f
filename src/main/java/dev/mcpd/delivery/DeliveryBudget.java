package dev.mcpd.delivery;

/**
 * How many body bytes the entries out for delivery may hold in memory at once. A window of 256 requests in flight to
 * each upstream would otherwise let 16 MiB entries hold gigabytes; with the budget, a delivery lane waits for room
 * before it reads the next entry — room for that entry's stored size, taken as the spool hands it out, then what the
 * body does not need is given back — and an entry's bytes come back when its exchange completes. A lane waiting for
 * an entry holds no room: one that reserved the largest body it could read (16 MiB of a 32 MiB budget) kept the other
 * lanes waiting on the budget, and every give woke them.
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

    /** Takes {@code bytes} if there is room for them now; false (nothing taken) if not. */
    synchronized boolean tryTake(long bytes) {
        if (!fits(bytes)) {
            return false;
        }
        held += bytes;
        return true;
    }

    /**
     * Waits until there is room for {@code bytes}, or {@code deadlineNanos} (on {@link System#nanoTime()}'s clock)
     * passed: false then. It takes nothing: another taker may be first.
     */
    synchronized boolean awaitRoom(long bytes, long deadlineNanos) throws InterruptedException {
        while (!fits(bytes)) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    /** An entry larger than the whole budget fits when nothing else is held: it goes alone rather than never. */
    private boolean fits(long bytes) {
        return held + Math.min(bytes, capacity) <= capacity;
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
