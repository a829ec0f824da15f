package dev.mcpd.spool;

/**
 * What an operator is shown of one entry waiting in the spool: no body, no credential, no idempotency key.
 *
 * @param seq              its sequence number
 * @param receivedAtMillis when the relay received it, epoch milliseconds
 * @param method           the request's method, as received
 * @param target           its path and query, as the sender wrote them (unescaped: escape it to print it)
 * @param bodyBytes        its body's size, as received
 */
public record WaitingEntry(long seq, long receivedAtMillis, String method, String target, long bodyBytes) {
}
