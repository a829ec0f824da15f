package dev.mcpd.delivery;

import java.time.Instant;
import java.util.List;

/** The waiting entries whose attempts failed, oldest first: what the relay's spool answer lists. */
public interface FailedAttempts {

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
    record Entry(long seq, long receivedAtMillis, String method, String target, long bodyBytes, int attempts,
                 String lastFailure, Instant lastFailureAt) {
    }

    /** The failure records of the {@code limit} oldest entries that have any, oldest first. */
    List<Entry> oldest(int limit);

    /** Entries with a failure record now. */
    int recorded();
}
