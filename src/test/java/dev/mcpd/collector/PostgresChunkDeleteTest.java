package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.store.Expiring;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.LeaseFence;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On PostgreSQL a sweep's chunk deletes at most its size of the oldest rows older than the cutoff — keys, batches
 * and the record of copies alike — and nothing as young as the cutoff.
 */
class PostgresChunkDeleteTest {

    private static final long CUTOFF = 1_700_000_000_000L;
    /** Five rows older than the cutoff (from 5 ms to 1 ms before it), two not (at it, and 1 ms after). */
    private static final long[] AGES = {CUTOFF - 3, CUTOFF, CUTOFF - 5, CUTOFF - 1, CUTOFF + 1, CUTOFF - 4, CUTOFF - 2};

    @RegisterExtension
    final SchemaStore pg = new SchemaStore("mcpd_chunk_");

    @BeforeEach
    void aStoreWithRowsEitherSideOfTheCutoff() throws Exception {
        TestPostgres postgres = pg.postgres();
        String schema = pg.schema();
        for (int i = 0; i < AGES.length; i++) {
            postgres.execute(schema, "INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms)"
                    + " VALUES ('', 'key-" + i + "', NULL, " + AGES[i] + ")");
            postgres.execute(schema, "INSERT INTO batches (idempotency_key, target, content_type, content_encoding,"
                    + " received_at_ms, events, rejected, body) VALUES ('key-" + i + "', '/v1/ingest',"
                    + " 'application/json', '', " + AGES[i] + ", 1, 0, '\\x7b7d'::bytea)");
            postgres.execute(schema, "INSERT INTO duplicates (idempotency_key, events, seen_at_ms) VALUES ('key-" + i
                    + "', 1, " + AGES[i] + ")");
        }
    }

    @Test
    void keysGoTwoAtATimeOldestFirstAndTheCutoffsOwnStay() throws Exception {
        chunksDeleteTheOldestFirst(Expiring.KEYS, "SELECT seen_at_ms FROM idempotency_keys");
    }

    @Test
    void batchesGoTwoAtATimeOldestFirstAndTheCutoffsOwnStay() throws Exception {
        chunksDeleteTheOldestFirst(Expiring.BATCHES, "SELECT received_at_ms FROM batches");
    }

    @Test
    void copiesGoTwoAtATimeOldestFirstAndTheCutoffsOwnStay() throws Exception {
        chunksDeleteTheOldestFirst(Expiring.COPIES, "SELECT seen_at_ms FROM duplicates");
    }

    private void chunksDeleteTheOldestFirst(Expiring what, String ages) throws Exception {
        JdbcStore store = pg.store();
        assertEquals(2, store.deleteChunk(what, CUTOFF, 2, LeaseFence.ALWAYS));
        assertEquals(List.of(CUTOFF - 3, CUTOFF - 2, CUTOFF - 1, CUTOFF, CUTOFF + 1), ages(ages),
                "the two oldest went first");
        assertEquals(2, store.deleteChunk(what, CUTOFF, 2, LeaseFence.ALWAYS));
        assertEquals(1, store.deleteChunk(what, CUTOFF, 2, LeaseFence.ALWAYS), "the last one older than the cutoff");
        assertEquals(0, store.deleteChunk(what, CUTOFF, 2, LeaseFence.ALWAYS), "none left to delete");
        assertEquals(List.of(CUTOFF, CUTOFF + 1), ages(ages), "nothing as young as the cutoff was deleted");
    }

    private List<Long> ages(String query) throws Exception {
        List<Long> ages = new ArrayList<>();
        try (Connection connection = pg.postgres().connect(pg.schema());
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(query + " ORDER BY 1")) {
            while (rows.next()) {
                ages.add(rows.getLong(1));
            }
        }
        return ages;
    }
}
