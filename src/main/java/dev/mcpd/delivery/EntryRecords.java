package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongPredicate;

/**
 * What delivery remembers of an entry it took out of the spool and has not finished — one record per entry, in one
 * place: the upstreams it failed on (so that it moves on to the next), how many entries the request that carries it
 * next may hold (its batch or merge was refused as a whole), whether it waits to be tried again before every newer entry
 * (oldest first, always), and its failed attempts with the last failure — what {@code GET /relay/spool} and {@code mcpd
 * relay spool list} show. Kept in memory only: a restart forgets it, as it forgets the upstreams' waits.
 *
 * <p>Cost: an entry gets a record at its first failed attempt (or when its request could not go as one); a delivered
 * or dead-lettered entry costs one map removal of a key that is almost always absent, so a healthy relay holds
 * nothing here. Records exist only for entries delivery has taken out and not finished: a failed entry goes back to the
 * spool first in line, so they are about as many as the lanes and windows hold at once. The bounds only guard against
 * a leak (a vanished spool directory drops entries without delivery finishing them); forgetting costs at most an
 * extra attempt.
 *
 * <p>Oldest first: the spool hands an entry given back after a failure out first, but a lane may already hold a newer
 * one while it waits for an upstream and a place in its window; so once a place is found, a lane whose oldest entry is
 * newer than one waiting to be tried again gives its place up ({@link #olderWaitsToRetry}).
 */
public final class EntryRecords implements FailedAttempts {

    /** Records kept at most: past this, a new entry gets none. */
    static final int MAX_RECORDS = 100_000;
    /**
     * Past this many failure records a new entry's failures are not recorded (it shows 0 attempts). A record holds the
     * entry's target, up to the 4 KiB a request line may have: 10 000 of them are 40 MiB at the very worst.
     */
    static final int MAX_FAILURE_RECORDS = 10_000;
    static final int MAX_FAILURE_CHARS = 300;
    private static final int AS_PACKED = ShipmentOutcome.AS_PACKED;

    /** One entry's record; guarded by itself. */
    private static final class Out {
        Entry failures;
        final Set<Integer> failedOn = new HashSet<>(2);
        int sendAtMost = AS_PACKED;
        boolean retryFirst;
    }

    private final ConcurrentSkipListMap<Long, Out> bySeq = new ConcurrentSkipListMap<>();
    /** How many records there are: a skip list's own size() walks every one of them. */
    private final AtomicInteger records = new AtomicInteger();
    private final AtomicInteger failureRecords = new AtomicInteger();
    private final LongPredicate inSpool;
    private final InstantSource clock;

    /** @param inSpool whether an entry is still in the spool ({@code Spool::holds}) */
    public EntryRecords(LongPredicate inSpool, InstantSource clock) {
        this.inSpool = inSpool;
        this.clock = clock;
    }

    /** The entry's record, made if it has none and the bound allows; null otherwise. */
    private Out record(long seq) {
        Out out = bySeq.get(seq);
        if (out != null || records.get() >= MAX_RECORDS) {
            return out;
        }
        Out made = new Out();
        Out raced = bySeq.putIfAbsent(seq, made);
        if (raced == null) {
            records.incrementAndGet();
        }
        return raced == null ? made : raced;
    }

    /** An attempt to deliver {@code entry} failed, as {@code why} says in one line. */
    void failed(SpoolEntry entry, String why) {
        Out out = record(entry.seq());
        if (out == null) {
            return;
        }
        synchronized (out) {
            if (out.failures == null && failureRecords.get() >= MAX_FAILURE_RECORDS) {
                return;
            }
            if (out.failures == null) {
                failureRecords.incrementAndGet();
            }
            out.failures = new Entry(entry.seq(), entry.request().receivedAtMillis(), entry.request().method(),
                    entry.request().target(), entry.request().body().length,
                    out.failures == null ? 1 : out.failures.attempts() + 1, oneLine(why), clock.instant());
        }
    }

    /**
     * The upstream of order {@code upstream} failed the request that carried {@code entries} retryably: they go next
     * to another, and before every newer entry. Marked before the failed request's place in the window is freed, so no
     * lane holding a newer entry takes that place and goes first.
     */
    void failedOn(List<SpoolEntry> entries, int upstream) {
        for (SpoolEntry entry : entries) {
            Out out = record(entry.seq());
            if (out != null) {
                synchronized (out) {
                    out.failedOn.add(upstream);
                    out.retryFirst = true;
                }
            }
        }
    }

    /** The upstreams (their orders) the entry failed on since it last moved on: a copy the caller may change. */
    Set<Integer> failedOn(long seq) {
        Out out = bySeq.get(seq);
        if (out == null) {
            return new HashSet<>(2);
        }
        synchronized (out) {
            return new HashSet<>(out.failedOn);
        }
    }

    /** The entry was delivered to, or refused by, an upstream, or it went back to one it failed on: it starts over. */
    void movedOn(long seq) {
        Out out = bySeq.get(seq);
        if (out != null) {
            synchronized (out) {
                out.failedOn.clear();
            }
        }
    }

    /** The request that carries the entry next may hold at most {@code count} entries (1: it goes alone). */
    void sendAtMost(long seq, int count) {
        if (count == AS_PACKED) {
            return;
        }
        Out out = record(seq);
        if (out != null) {
            synchronized (out) {
                out.sendAtMost = count;
            }
        }
    }

    /** How many entries the request that carries the entry may hold ({@link #AS_PACKED}: as many as it may). */
    int sendAtMost(long seq) {
        Out out = bySeq.get(seq);
        if (out == null) {
            return AS_PACKED;
        }
        synchronized (out) {
            return out.sendAtMost;
        }
    }

    /** The entry is packed: its limit applies to this request alone. */
    void packed(long seq) {
        Out out = bySeq.get(seq);
        if (out != null) {
            synchronized (out) {
                out.sendAtMost = AS_PACKED;
            }
        }
    }

    /**
     * Whether an entry older than {@code oldest} waits to be tried again — one that is no longer in the spool at all
     * (expired into dead/ meanwhile, say) does not.
     */
    boolean olderWaitsToRetry(long oldest) {
        ConcurrentNavigableMap<Long, Out> older = bySeq.headMap(oldest, false);
        if (older.isEmpty()) {
            return false;
        }
        for (Map.Entry<Long, Out> entry : older.entrySet()) {
            Out out = entry.getValue();
            boolean retry;
            synchronized (out) {
                retry = out.retryFirst;
            }
            if (!retry) {
                continue;
            }
            if (inSpool.test(entry.getKey())) {
                return true;
            }
            finished(entry.getKey()); // it left the spool another way
        }
        return false;
    }

    /** The shipment goes out now: its entries are tried again. */
    void sending(Shipment shipment) {
        if (bySeq.isEmpty()) {
            return;
        }
        for (SpoolEntry entry : shipment.entries()) {
            Out out = bySeq.get(entry.seq());
            if (out != null) {
                synchronized (out) {
                    out.retryFirst = false;
                }
            }
        }
    }

    /** The entry left the spool (delivered, or kept in dead/): its record goes. */
    void finished(long seq) {
        Out out = bySeq.remove(seq);
        if (out != null) {
            records.decrementAndGet();
            synchronized (out) {
                if (out.failures != null) {
                    failureRecords.decrementAndGet();
                }
            }
        }
    }

    @Override
    public List<Entry> oldest(int limit) {
        List<Entry> oldest = new ArrayList<>(Math.min(limit, 64));
        for (Out out : bySeq.values()) {
            if (oldest.size() >= limit) {
                break;
            }
            synchronized (out) {
                if (out.failures != null) {
                    oldest.add(out.failures);
                }
            }
        }
        return oldest;
    }

    @Override
    public int recorded() {
        return failureRecords.get();
    }

    /** Entries with a record of any kind now (tests). */
    int held() {
        return records.get();
    }

    /** Entries waiting to be tried again before newer ones (tests, status). */
    int waitingToRetry() {
        int waiting = 0;
        for (Out out : bySeq.values()) {
            synchronized (out) {
                waiting += out.retryFirst ? 1 : 0;
            }
        }
        return waiting;
    }

    /** One line of at most {@value #MAX_FAILURE_CHARS} characters: a failure's cause may quote what it met. */
    private static String oneLine(String why) {
        String line = why.replaceAll("\\s+", " ").strip();
        return line.length() <= MAX_FAILURE_CHARS ? line : line.substring(0, MAX_FAILURE_CHARS - 1) + "…";
    }
}
