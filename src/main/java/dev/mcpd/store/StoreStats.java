package dev.mcpd.store;

/**
 * What the store holds: {@code GET /v1/stats}.
 *
 * @param conflicts copies that came again under a key stored with another body (counted in {@code duplicates} too)
 */
public record StoreStats(long batches, long events, long duplicates, long conflicts) {
}
