package dev.mcpd.collector;

/**
 * What archiving a batch did: the counts the sender is answered with.
 *
 * @param accepted  events stored
 * @param duplicate events of a batch whose key was seen before (nothing stored)
 * @param rejected  events that are not JSON objects
 */
public record Archived(int accepted, int duplicate, int rejected) {

    static Archived stored(Batch batch) {
        return new Archived(batch.events(), 0, batch.rejected());
    }

    /** A batch seen before answers all its events as duplicate. */
    static Archived duplicateOf(Batch batch) {
        return new Archived(0, batch.events() + batch.rejected(), 0);
    }
}
