package dev.mcpd.spool;

/**
 * Where one committed entry sits in its segment, and when it was received: what the writer returns for each entry,
 * what a scan finds, and what the index and the reader work from.
 *
 * @param seq              its sequence number
 * @param offset           where its record starts in the segment file
 * @param size             its record's framed size, in bytes
 * @param receivedAtMillis when the relay received it, epoch milliseconds
 */
record EntryLocation(long seq, long offset, int size, long receivedAtMillis) {
}
