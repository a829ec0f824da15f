package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import java.util.List;

/**
 * What one delivery exchange carries: one spool entry sent as it was received, or a relay batch of entries that
 * share a credential ({@link #batch()}), sent in one request to an mcpd collector that takes batches.
 */
record Shipment(List<SpoolEntry> entries, boolean batch) {

    Shipment {
        entries = List.copyOf(entries);
        if (entries.isEmpty() || !batch && entries.size() != 1) {
            throw new IllegalArgumentException("a shipment is one entry, or a batch of at least one");
        }
    }

    static Shipment single(SpoolEntry entry) {
        return new Shipment(List.of(entry), false);
    }

    static Shipment batchOf(List<SpoolEntry> entries) {
        return new Shipment(entries, true);
    }

    SpoolEntry first() {
        return entries.get(0);
    }

    int size() {
        return entries.size();
    }

    long bytes() {
        return entries.stream().mapToLong(e -> e.request().body().length).sum();
    }
}
