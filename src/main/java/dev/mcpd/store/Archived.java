package dev.mcpd.store;

/**
 * What archiving a batch did: the counts the sender is answered with.
 *
 * @param accepted  events stored
 * @param duplicate events of a batch whose key was seen before (nothing stored)
 * @param rejected  events that are not JSON objects
 * @param conflict  a duplicate whose key was stored with another body: still a duplicate (the key is the sender's
 *                  promise), but a sign of a bug in the sender, counted apart
 */
public record Archived(int accepted, int duplicate, int rejected, boolean conflict) {

    static Archived stored(Batch batch) {
        return new Archived(batch.events(), 0, batch.rejected(), false);
    }

    /** A batch seen before answers all its events as duplicate. */
    static Archived duplicateOf(Batch batch, boolean conflict) {
        return new Archived(0, batch.events() + batch.rejected(), 0, conflict);
    }
}
