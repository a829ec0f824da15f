package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Each entry's failed attempts, bounded: a record per entry that failed, gone when the entry leaves the spool. */
class EntryAttemptsTest {

    private final EntryAttempts attempts = new EntryAttempts(InstantSource.fixed(Instant.parse("2026-12-03T10:00:00Z")));

    private static SpoolEntry entry(long seq) {
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/ingest?n=" + seq, "application/json", "", "k" + seq,
                Optional.empty(), 1_700_000_000_000L, "{}".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void eachFailedAttemptCountsAndTheLastFailureIsOneLine() {
        attempts.failed(entry(7), "upstream=a 503");
        attempts.failed(entry(7), "upstream=b Connection\nrefused");
        EntryAttempts.Record record = attempts.oldest(10).get(0);
        assertEquals(2, record.attempts());
        assertEquals("upstream=b Connection refused", record.lastFailure());
        assertEquals("/v1/ingest?n=7", record.target());
    }

    @Test
    void aFinishedEntryLeavesNoRecordAndTheOldestComeFirst() {
        attempts.failed(entry(9), "503");
        attempts.failed(entry(3), "503");
        attempts.failed(entry(5), "503");
        attempts.finished(5);
        assertEquals(java.util.List.of(3L, 9L), attempts.oldest(10).stream().map(EntryAttempts.Record::seq).toList());
        assertEquals(2, attempts.recorded());
    }

    @Test
    void theRecordsAndEachFailureLineAreBounded() {
        for (long seq = 1; seq <= EntryAttempts.MAX_RECORDS + 5; seq++) {
            attempts.failed(entry(seq), "x".repeat(10_000));
        }
        assertEquals(EntryAttempts.MAX_RECORDS, attempts.recorded(), "past the bound a new entry is not recorded");
        attempts.failed(entry(1), "again");
        assertEquals(2, attempts.oldest(1).get(0).attempts(), "an entry already recorded still counts");
        assertTrue(attempts.oldest(2).get(1).lastFailure().length() <= EntryAttempts.MAX_FAILURE_CHARS);
    }
}
