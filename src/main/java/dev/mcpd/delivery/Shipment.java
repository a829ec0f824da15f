package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;
import java.util.List;

/**
 * What one delivery exchange carries: one spool entry sent as it was received; a relay batch of entries that share a
 * credential, sent in one request to an mcpd collector that takes batches; or OTLP entries of one signal, content type
 * and credential merged into one export request ({@link #mergedBody()}) for an upstream that takes no batches — or
 * Prometheus remote writes of one stream merged into one, whose body is already in the encoding the format wants
 * ({@link #mergedEncoding()}: {@code snappy}; empty for OTLP, which the wire may gzip).
 */
record Shipment(List<SpoolEntry> entries, Kind kind, byte[] mergedBody, String mergedEncoding) {

    enum Kind { SINGLE, BATCH, MERGE }

    Shipment {
        entries = List.copyOf(entries);
        if (entries.isEmpty() || kind == Kind.SINGLE && entries.size() != 1 || kind == Kind.MERGE
                && (entries.size() < 2 || mergedBody == null)) {
            throw new IllegalArgumentException("a shipment is one entry, a batch of at least one, or a merge of two"
                    + " or more");
        }
    }

    static Shipment single(SpoolEntry entry) {
        return new Shipment(List.of(entry), Kind.SINGLE, null, "");
    }

    static Shipment batchOf(List<SpoolEntry> entries) {
        return new Shipment(entries, Kind.BATCH, null, "");
    }

    /** @param body the one export request the entries' bodies make, decoded (not yet compressed for the wire) */
    static Shipment mergeOf(List<SpoolEntry> entries, byte[] body) {
        return new Shipment(entries, Kind.MERGE, body, "");
    }

    /** @param body the one remote-write request the entries' bodies make, snappy-encoded as the format wants */
    static Shipment remoteWriteMergeOf(List<SpoolEntry> entries, byte[] body) {
        return new Shipment(entries, Kind.MERGE, body, RemoteWriteMerge.ENCODING);
    }

    boolean batch() {
        return kind == Kind.BATCH;
    }

    boolean merge() {
        return kind == Kind.MERGE;
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
