package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How often each entry still in the spool has failed to be delivered, and how it failed last: what {@code GET
 * /relay/spool} and {@code mcpd relay spool list} show. Kept in memory only — a restart forgets it, as it forgets
 * the upstreams' waits.
 *
 * <p>Cost: an entry gets a record at its first failed attempt, and each failed attempt replaces it; a delivered or
 * dead-lettered entry costs one map removal (of a key that is almost always absent), so a healthy relay holds nothing
 * here. Records exist only for entries delivery has taken out and not finished: a failed entry goes back to the spool
 * first in line, so they are about as many as the lanes and windows hold at once. {@link #MAX_RECORDS} only guards
 * against a leak (a vanished spool directory drops entries without delivery finishing them).
 */
public final class EntryAttempts {

    /**
     * Past this many records a new entry's failures are not recorded (it shows 0 attempts). A record holds the
     * entry's target, up to the 4 KiB a request line may have: 10 000 of them are 40 MiB at the very worst.
     */
    static final int MAX_RECORDS = 10_000;
    static final int MAX_FAILURE_CHARS = 300;

    /**
     * One entry's failed attempts.
     *
     * @param seq              the entry's sequence number
     * @param receivedAtMillis when the relay received it, epoch milliseconds
     * @param method           its method
     * @param target           its target, as the sender wrote it (escape it to print it)
     * @param bodyBytes        its body's size
     * @param attempts         attempts that failed (each upstream tried counts once per attempt)
     * @param lastFailure      one line: the upstream and what it answered, or why there was no answer
     * @param lastFailureAt    when the last one failed
     */
    public record Record(long seq, long receivedAtMillis, String method, String target, long bodyBytes, int attempts,
                         String lastFailure, Instant lastFailureAt) {
    }

    private final Map<Long, Record> bySeq = new ConcurrentHashMap<>();
    private final InstantSource clock;

    public EntryAttempts(InstantSource clock) {
        this.clock = clock;
    }

    /** An attempt to deliver {@code entry} failed, as {@code why} says in one line. */
    void failed(SpoolEntry entry, String why) {
        if (bySeq.size() >= MAX_RECORDS && !bySeq.containsKey(entry.seq())) {
            return;
        }
        Instant now = clock.instant();
        bySeq.compute(entry.seq(), (seq, before) -> new Record(seq, entry.request().receivedAtMillis(),
                entry.request().method(), entry.request().target(), entry.request().body().length,
                before == null ? 1 : before.attempts() + 1, oneLine(why), now));
    }

    /** The entry left the spool (delivered, or kept in dead/): its record goes. */
    void finished(long seq) {
        bySeq.remove(seq);
    }

    /** The records of the {@code limit} oldest entries that have any, oldest first. */
    public List<Record> oldest(int limit) {
        return bySeq.values().stream().sorted(Comparator.comparingLong(Record::seq)).limit(limit).toList();
    }

    /** Entries with a record now. */
    public int recorded() {
        return bySeq.size();
    }

    /** One line of at most {@value #MAX_FAILURE_CHARS} characters: a failure's cause may quote what it met. */
    private static String oneLine(String why) {
        String line = why.replaceAll("\\s+", " ").strip();
        return line.length() <= MAX_FAILURE_CHARS ? line : line.substring(0, MAX_FAILURE_CHARS - 1) + "…";
    }
}
