package dev.mcpd.delivery;

/**
 * A merged OTLP request was refused for good: some entry in it is refused, or the merge as a whole (its size). Its
 * entries go back to the spool, first in line, each to share a request with at most half as many as before, so the
 * halves are tried apart until the refused entries travel alone and get their own answers; the others are delivered.
 */
final class SplitMerge extends RuntimeException {

    private final int atMost;

    SplitMerge(String why, int entries) {
        super(why, null, false, false);
        this.atMost = Math.max(1, entries / 2);
    }

    /** How many entries the request that carries one of these may hold next time. */
    int atMost() {
        return atMost;
    }
}
