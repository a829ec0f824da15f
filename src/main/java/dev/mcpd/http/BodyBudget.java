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
 * what the process does besides (the spool's index, delivery, Camel and Vert.x). Each request in flight also holds
 * {@link #PER_REQUEST} of it, however small its body.
 */
public final class BodyBudget {

    /** The share of the heap request bodies may hold: one quarter. */
    static final int HEAP_SHARE = 4;
    /**
     * What a request costs besides its body, held against the budget from its first step to its answer: about twice
     * the heap measured per HTTP/2 request in flight (Netty's stream and headers, Vert.x's request, answer and routing
     * context: some 4 KiB). Without it, a thousand connections of 100 streams of a few bytes each hold 400 MiB that no
     * budget counts.
     */
    public static final long PER_REQUEST = 8_192;

    private final long capacity;
    private final long perRequest;
    private final AtomicLong held = new AtomicLong();

    /** A budget of {@code capacity} bytes of bodies alone (for tests that count bytes exactly). */
    BodyBudget(long capacity) {
        this(capacity, 0);
    }

    BodyBudget(long capacity, long perRequest) {
        this.capacity = capacity;
        this.perRequest = perRequest;
    }

    /** The budget for this JVM: a quarter of its maximum heap, at least {@code maxBodyBytes}; {@link #PER_REQUEST}. */
    public static BodyBudget forHeap(long maxBodyBytes) {
        return new BodyBudget(Math.max(maxBodyBytes, Runtime.getRuntime().maxMemory() / HEAP_SHARE), PER_REQUEST);
    }

    /** What each request holds of the budget besides its body's bytes. */
    long perRequest() {
        return perRequest;
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
