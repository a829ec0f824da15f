package dev.mcpd.spool;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What became of the entries a sender waits for ({@code mcpd-relay-wait}): delivered, with the
 * upstream's own answer, or moved to dead/, with its refusal. A sender registers its entry before delivery can take
 * it (the spool's append hook), so no fate is missed; delivery reports the fate of every entry, which costs one
 * lookup in an (almost always empty) map when nobody waits.
 */
public final class EntryFates {

    /**
     * An entry's fate and the answer the upstream gave for it.
     *
     * @param deadLettered true when it went to dead/, false when delivered
     * @param status       the upstream's status (for an entry that could not be sent at all: 400)
     * @param contentType  the answer's content type, or "" when unknown
     * @param body         the answer's body (for a dead letter, its first KiB, as kept beside it)
     */
    public record Fate(boolean deadLettered, int status, String contentType, byte[] body) {
    }

    private final Map<Long, CompletableFuture<Fate>> awaited = new ConcurrentHashMap<>();

    /** Registers interest in the entry {@code seq}: the future completes with its fate. */
    public CompletableFuture<Fate> expect(long seq) {
        return awaited.computeIfAbsent(seq, s -> new CompletableFuture<>());
    }

    /** The sender stopped waiting (its time was up). */
    public void forget(long seq) {
        awaited.remove(seq);
    }

    /** Entries someone waits for now. */
    public int awaited() {
        return awaited.size();
    }

    /** Delivery reports that an upstream took the entry, with its answer. */
    public void delivered(long seq, int status, String contentType, byte[] body) {
        report(seq, new Fate(false, status, contentType, body));
    }

    /** Delivery reports that the entry went to dead/, with its refusal. */
    public void deadLettered(long seq, int status, String contentType, byte[] body) {
        report(seq, new Fate(true, status, contentType, body));
    }

    private void report(long seq, Fate fate) {
        if (awaited.isEmpty()) {
            return;
        }
        CompletableFuture<Fate> waiting = awaited.remove(seq);
        if (waiting != null) {
            waiting.complete(fate);
        }
    }
}
