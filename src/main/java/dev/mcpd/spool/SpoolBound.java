package dev.mcpd.spool;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The spool's bound, kept without a lock: the bytes the waiting entries occupy as stored, plus the bytes
 * reserved by entries being written, never exceed {@link #maxBytes} — not even by one request, however many senders
 * race. A reservation is one compare-and-set of {@code claimed}; a write that fails gives its reservation back; an
 * entry that leaves the spool gives its stored size back.
 *
 * <p>It also remembers refusals: how many, and when the last one was, which readiness reads.
 */
final class SpoolBound {

    private final long maxBytes;
    private final LongSupplier nanoTime;
    /** Bytes stored plus bytes reserved by appends not yet committed: what admission compares with the bound. */
    private final AtomicLong claimed = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    /** Bytes kept beside the spool that count against the bound too (dead/): 0 until {@link #countBeside}. */
    private volatile LongSupplier beside = () -> 0;
    private volatile long lastRefusedNanos = Long.MIN_VALUE;

    SpoolBound(long maxBytes) {
        this(maxBytes, System::nanoTime);
    }

    SpoolBound(long maxBytes, LongSupplier nanoTime) {
        this.maxBytes = maxBytes;
        this.nanoTime = nanoTime;
    }

    long maxBytes() {
        return maxBytes;
    }

    /** Counts {@code bytes} (read at every admission: it must not block) against the bound besides the spool's own. */
    void countBeside(LongSupplier bytes) {
        beside = bytes;
    }

    /** The bytes kept beside the spool that count against the bound now. */
    long besideBytes() {
        return Math.max(0, beside.getAsLong());
    }

    /** What recovery found stored: the starting point of the accounting. */
    void recovered(long storedBytes) {
        claimed.set(storedBytes);
    }

    /**
     * Reserves {@code size} bytes for an entry about to be written, if they fit; a "no" counts as a refusal. Two
     * concurrent callers can never both slip past the bound: each reservation is one compare-and-set.
     */
    boolean reserve(long size) {
        long kept = besideBytes();
        while (true) {
            long now = claimed.get();
            if (now + kept + size > maxBytes || now + size < 0) {
                refusedOne();
                return false;
            }
            if (claimed.compareAndSet(now, now + size)) {
                return true;
            }
        }
    }

    /**
     * Whether an entry with a body of {@code bodyBytes} could be taken now: an early, cheap check before a body is
     * read (the append reserves, atomically, later). A "no" counts as a refusal.
     */
    boolean admits(long bodyBytes) {
        // subtracted: a huge body cannot overflow
        long room = maxBytes - claimed.get() - besideBytes() - RecordCodec.MIN_ENTRY_BYTES;
        if (Math.max(bodyBytes, 0) > room) {
            refusedOne();
            return false;
        }
        return true;
    }

    /**
     * Gives bytes back (a negative {@code bytes} takes more): a write that failed, an entry that left the spool, or
     * the difference between a reservation and what was really stored.
     */
    void giveBack(long bytes) {
        claimed.addAndGet(-bytes);
    }

    /** Bytes stored and reserved now. */
    long claimed() {
        return claimed.get();
    }

    /** Requests refused since start because they would not fit. */
    long refused() {
        return refused.get();
    }

    /** Whether a request was refused within {@code window}. */
    boolean refusedWithin(Duration window) {
        long last = lastRefusedNanos;
        return last != Long.MIN_VALUE && nanoTime.getAsLong() - last <= window.toNanos();
    }

    private void refusedOne() {
        refused.incrementAndGet();
        lastRefusedNanos = nanoTime.getAsLong();
    }
}
