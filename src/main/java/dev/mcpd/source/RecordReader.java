package dev.mcpd.source;

import dev.mcpd.store.ReadEntry;
import dev.mcpd.wire.RelayBatch;

/** Reads the request a record describes, judged as the same request sent alone would be. */
@FunctionalInterface
public interface RecordReader {

    /** @param now the collector's time of reading it, epoch milliseconds */
    ReadEntry read(RelayBatch.Entry request, long now);
}
