package dev.mcpd.collector;

/** What the store holds: {@code GET /v1/stats}. */
public record StoreStats(long batches, long events, long duplicates) {
}
