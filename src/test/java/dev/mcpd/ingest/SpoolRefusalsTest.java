package dev.mcpd.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.spool.SpoolFullException;
import dev.mcpd.spool.SpoolWriteException;
import java.io.IOException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What a failed spool write tells the sender: retry later, with a reason that says whose fault it is. */
class SpoolRefusalsTest {

    @Test
    void aFullSpoolIs503WithRetryAfterAndSaysSo() {
        IngestRefusal refusal = SpoolRefusals.of(new SpoolFullException(1024));
        assertEquals(503, refusal.status());
        assertEquals(IngestRefusal.Kind.SPOOL_FULL, refusal.kind());
        assertEquals("the relay's spool is full; retry later", refusal.reason());
        assertEquals(Optional.of(5), refusal.retryAfterSeconds());
    }

    @Test
    void aWriteTheDiskFailedIs503WithRetryAfterAndNamesNoDiskDetail() {
        IngestRefusal refusal = SpoolRefusals.of(new SpoolWriteException("spool write failed: No space left"));
        assertEquals(503, refusal.status());
        assertEquals(IngestRefusal.Kind.UNAVAILABLE, refusal.kind());
        assertEquals("the spool could not store the request; retry later", refusal.reason());
        assertEquals(Optional.of(5), refusal.retryAfterSeconds());
    }

    @Test
    void anyOtherFailureIsNotTheSpoolsToAnswer() {
        assertNull(SpoolRefusals.of(new IllegalStateException("a bug")));
        assertNull(SpoolRefusals.of(new IOException("another step's")), "an append never fails with it");
    }
}
