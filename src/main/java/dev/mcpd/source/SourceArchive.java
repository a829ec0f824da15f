package dev.mcpd.source;

import dev.mcpd.store.Archived;
import dev.mcpd.store.Batch;
import dev.mcpd.store.Sender;
import dev.mcpd.store.StoreUnavailable;
import java.util.List;

/** The collector's way into the store, as the source uses it for what one poll returned. */
@FunctionalInterface
public interface SourceArchive {

    /** What happened to each of {@code batches}, in order: all are kept, or none ({@link StoreUnavailable}). */
    List<Archived> archive(Sender sender, List<Batch> batches);
}
