package dev.mcpd.spool;

/**
 * Proof that an entry is durable: returned only after its bytes and its file's directory entry were forced to disk.
 *
 * @param seq         the entry's sequence number
 * @param storedBytes the bytes the entry occupies in the spool (record framing, metadata and body)
 */
public record SpoolReceipt(long seq, long storedBytes) {
}
