package dev.mcpd.spool;

/**
 * An accepted request as the spool holds it.
 *
 * @param seq     its sequence number: unique, and larger than every entry accepted before it
 * @param request what was received
 */
public record SpoolEntry(long seq, SpoolRequest request) {
}
