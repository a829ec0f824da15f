package dev.mcpd.collector;

/** What the store holds: {@code GET /v1/stats} (SPEC §9). */
public record StoreStats(long batches, long events, long duplicates) {
}
