package dev.mcpd.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How many request-body bytes the process holds in memory at once, across all requests being read, spooled or
 * archived. Without a bound, forty senders posting 16 MiB each at the same moment need more heap than a container
 * gives: the JVM runs out of memory and every sender is answered badly, or the process is killed. With it, a body that
 * does not fit is refused at once with 503 and {@code Retry-After} (what every OpenTelemetry exporter retries), and
 * the bodies that fit are taken as usual.
 *
 * <p>The bound is a quarter of the maximum heap ({@link #HEAP_SHARE}), and never less than one body of
 * {@code --max-body-bytes}, so the largest allowed request can always be taken alone. The rest of the heap is for
 * what the process does besides (the spool's index, delivery, Camel and Vert.x).
 */
public final class BodyBudget {

    /** The share of the heap request bodies may hold: one quarter. */
    static final int HEAP_SHARE = 4;

    private final long capacity;
    private final AtomicLong held = new AtomicLong();

    BodyBudget(long capacity) {
        this.capacity = capacity;
    }

    /** The budget for this JVM: a quarter of its maximum heap, at least {@code maxBodyBytes}. */
    public static BodyBudget forHeap(long maxBodyBytes) {
        return new BodyBudget(Math.max(maxBodyBytes, Runtime.getRuntime().maxMemory() / HEAP_SHARE));
    }

    /** Takes {@code bytes} if they fit now; false (and nothing taken) if they do not. */
    boolean tryTake(long bytes) {
        while (true) {
            long now = held.get();
            if (bytes > capacity - now) {
                return false;
            }
            if (held.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    void give(long bytes) {
        held.addAndGet(-bytes);
    }

    public long capacity() {
        return capacity;
    }

    /** Bytes held now. */
    public long held() {
        return held.get();
    }
}
