package dev.mcpd.spool;

import java.io.IOException;

/**
 * How an entry taken from outside the ingest route (a replayed dead letter) is written: durably, through the same path
 * as a sender's request, its new sequence number returned once it is.
 */
@FunctionalInterface
public interface DurableAppend {

    /**
     * @throws SpoolFullException  the spool is at its bound: nothing was written
     * @throws IOException          it could not be written: nothing was kept
     * @throws InterruptedException the wait for the write was interrupted
     */
    long append(SpoolRequest request) throws IOException, InterruptedException;
}
