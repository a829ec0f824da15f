package dev.mcpd.delivery;

/**
 * An attempt failed in a way worth retrying (the upstream now waits): the entry goes back to the spool, ahead of
 * newer ones, and the next lane to take it sends it to the next upstream that is not waiting. No thread waits for that.
 */
final class RetryElsewhere extends RuntimeException {
    RetryElsewhere(String why) {
        super(why, null, false, false);
    }
}
