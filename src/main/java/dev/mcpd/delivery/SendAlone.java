package dev.mcpd.delivery;

/**
 * A batch could not go as one: the upstream chosen does not take relay batches, or it refused the batch as a whole
 * (a permanent status for the request, not for its entries). Its entries go back to the spool, first in line, marked
 * to travel alone, so each gets its own answer; none is dead-lettered for what was the batch's fault.
 */
final class SendAlone extends RuntimeException {
    SendAlone(String why) {
        super(why, null, false, false);
    }
}
