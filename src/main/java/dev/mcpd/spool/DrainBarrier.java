package dev.mcpd.spool;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Callers waiting until no entry with a sequence number up to theirs is left in the spool. One future per
 * distinct sequence number, shared by all who wait for it; the spool calls {@link #passed} when the oldest waiting
 * entry moves on, and everything below it completes — no poll loop, no timer per waiter. Entries finish out of order
 * (windows, batches), so the barrier follows the oldest waiting entry, never the newest delivered one.
 */
final class DrainBarrier {

    private static final class Waiters {
        final CompletableFuture<Void> drained = new CompletableFuture<>();
        int count;
    }

    private final TreeMap<Long, Waiters> waiting = new TreeMap<>();
    private final AtomicInteger total = new AtomicInteger();

    /**
     * Registers a waiter for {@code seq}, then asks the spool once for its oldest waiting entry: a drain that came
     * between the caller's last look and the registration is not missed.
     */
    CompletableFuture<Void> join(long seq, LongSupplier oldestWaitingSeq) {
        CompletableFuture<Void> drained;
        synchronized (this) {
            Waiters waiters = waiting.computeIfAbsent(seq, s -> new Waiters());
            waiters.count++;
            total.incrementAndGet();
            drained = waiters.drained;
        }
        long oldest = oldestWaitingSeq.getAsLong();
        if (oldest < 0 || oldest > seq) {
            passed(oldest);
        }
        return drained;
    }

    /**
     * A waiter for {@code seq} stops waiting (it timed out, or its caller went away); {@code drained} is the future
     * {@link #join} gave it, so that a waiter released a moment ago cannot take the place of a newer one.
     */
    synchronized void leave(long seq, CompletableFuture<Void> drained) {
        Waiters waiters = waiting.get(seq);
        if (waiters == null || waiters.drained != drained) {
            return; // already released
        }
        total.decrementAndGet();
        if (--waiters.count == 0) {
            waiting.remove(seq);
        }
    }

    /** Releases every waiter for a sequence number below {@code oldestWaiting}; -1 means no entry waits at all. */
    void passed(long oldestWaiting) {
        if (total.get() == 0) {
            return;
        }
        List<CompletableFuture<Void>> released = new ArrayList<>();
        synchronized (this) {
            Map<Long, Waiters> below = oldestWaiting < 0 ? waiting : waiting.headMap(oldestWaiting, false);
            for (Waiters waiters : below.values()) {
                total.addAndGet(-waiters.count);
                released.add(waiters.drained);
            }
            below.clear();
        }
        released.forEach(drained -> drained.complete(null)); // outside the lock: the callers' code runs here
    }

    /** Callers waiting now. */
    int waiters() {
        return total.get();
    }
}
