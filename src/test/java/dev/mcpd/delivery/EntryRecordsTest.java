package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What delivery remembers of an entry out, in one record: its failed attempts, the upstreams it failed on, how many
 * entries may travel with it, whether it goes before newer ones — bounded, gone when the entry leaves the spool.
 */
class EntryRecordsTest {

    private final EntryRecords attempts = new EntryRecords(seq -> true,
            InstantSource.fixed(Instant.parse("2026-12-03T10:00:00Z")));

    private static SpoolEntry entry(long seq) {
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/ingest?n=" + seq, "application/json", "", "k" + seq,
                Optional.empty(), 1_700_000_000_000L, "{}".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void eachFailedAttemptCountsAndTheLastFailureIsOneLine() {
        attempts.failed(entry(7), "upstream=a 503");
        attempts.failed(entry(7), "upstream=b Connection\nrefused");
        FailedAttempts.Entry record = attempts.oldest(10).get(0);
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
        assertEquals(List.of(3L, 9L), attempts.oldest(10).stream().map(FailedAttempts.Entry::seq).toList());
        assertEquals(2, attempts.recorded());
    }

    @Test
    void theRecordsAndEachFailureLineAreBounded() {
        for (long seq = 1; seq <= EntryRecords.MAX_FAILURE_RECORDS + 5; seq++) {
            attempts.failed(entry(seq), "x".repeat(10_000));
        }
        assertEquals(EntryRecords.MAX_FAILURE_RECORDS, attempts.recorded(), "past the bound a new entry is not recorded");
        for (long seq = 1; seq <= EntryRecords.MAX_RECORDS + 5; seq++) {
            attempts.sendAtMost(seq, 1);
        }
        assertEquals(EntryRecords.MAX_RECORDS, attempts.held(), "records of any kind are bounded too");
        attempts.failed(entry(1), "again");
        assertEquals(2, attempts.oldest(1).get(0).attempts(), "an entry already recorded still counts");
        assertTrue(attempts.oldest(2).get(1).lastFailure().length() <= EntryRecords.MAX_FAILURE_CHARS);
    }

    @Test
    void anEntryThatFailedOnAnUpstreamMovesOnAndGoesBeforeNewerOnes() {
        attempts.failedOn(List.of(entry(4), entry(5)), 1);
        assertEquals(Set.of(1), attempts.failedOn(4));
        assertTrue(attempts.olderWaitsToRetry(6), "a newer entry gives way to the failed ones");
        assertFalse(attempts.olderWaitsToRetry(4), "nothing older than the oldest failed one waits");
        attempts.sending(Shipment.batchOf(List.of(entry(4), entry(5))));
        assertFalse(attempts.olderWaitsToRetry(6), "once sent again, newer entries go on");
        assertEquals(Set.of(1), attempts.failedOn(5), "it still moves on from the upstream it failed on");
        attempts.movedOn(5);
        assertEquals(Set.of(), attempts.failedOn(5));
        Set<Integer> copy = attempts.failedOn(4);
        copy.add(2);
        assertEquals(Set.of(1), attempts.failedOn(4), "the caller's copy is its own");
        assertEquals(0, attempts.recorded(), "no failure recorded: none shown");
    }

    @Test
    void aFailedEntryThatLeftTheSpoolAnotherWayHoldsNoneBack() {
        Set<Long> inSpool = new HashSet<>(Set.of(2L));
        EntryRecords records = new EntryRecords(inSpool::contains, InstantSource.system());
        records.failedOn(List.of(entry(2)), 1);
        assertTrue(records.olderWaitsToRetry(3));
        inSpool.clear(); // expired into dead/, say
        assertFalse(records.olderWaitsToRetry(3));
        assertEquals(0, records.waitingToRetry(), "and its record is gone");
    }

    @Test
    void aLimitOnHowManyTravelTogetherHoldsForTheNextRequestOnly() {
        assertEquals(ShipmentOutcome.AS_PACKED, attempts.sendAtMost(8));
        attempts.sendAtMost(8, 1);
        assertEquals(1, attempts.sendAtMost(8));
        attempts.packed(8);
        assertEquals(ShipmentOutcome.AS_PACKED, attempts.sendAtMost(8));
        attempts.sendAtMost(9, ShipmentOutcome.AS_PACKED);
        assertEquals(0, attempts.waitingToRetry());
        attempts.finished(8);
        attempts.finished(9);
        assertTrue(attempts.oldest(10).isEmpty());
        assertEquals(0, attempts.held(), "every record gone with its entry");
    }
}
