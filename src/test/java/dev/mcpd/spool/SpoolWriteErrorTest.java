package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a failing disk does to the spool, without root or a small file system ({@link FailingDisk}): a write or an
 * {@code fdatasync} that fails fails the entries of its batch — none of them is acknowledged, none is read at the next
 * start — the entries before it are whole, and appends work again once the disk does.
 */
class SpoolWriteErrorTest {

    @TempDir
    Path dir;

    private final FailingDisk disk = new FailingDisk();

    private static SpoolRequest request(String name) {
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-" + name, Optional.empty(),
                1_700_000_000_000L, ("{\"events\":[{\"name\":\"" + name + "\"}]}").getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> keysOnDisk(Path dir) throws Exception {
        return SpoolReader.read(dir).entries().stream().map(e -> e.request().idempotencyKey()).toList();
    }

    @Test
    void aWriteThatFailsHalfWayKeepsNothingOfItsEntryAndTheNextAppendWorksOnceTheDiskDoes() throws Exception {
        try (Spool spool = Spool.open(dir, Spool.Options.unbounded(), disk)) {
            spool.append(request("before")).get(10, TimeUnit.SECONDS);
            disk.failWritesAfter(20); // the next record's header and a little more, then ENOSPC
            ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> spool.append(request("lost")).get(10, TimeUnit.SECONDS));
            assertInstanceOf(SpoolWriteException.class, failed.getCause());
            assertTrue(spool.writeProblem().orElseThrow().contains("No space left on device"), spool.writeProblem()
                    .toString());
            disk.heal();
            spool.append(request("after")).get(10, TimeUnit.SECONDS);
            assertTrue(spool.writeProblem().isEmpty(), "a write that succeeds clears the problem");
            assertEquals(2, spool.entries());
        }
        assertEquals(List.of("key-before", "key-after"), keysOnDisk(dir), "nothing of the failed entry is read");
    }

    @Test
    void aFailingFdatasyncFailsTheWholeBatchAndLeavesTheEntriesBeforeItWhole() throws Exception {
        try (Spool spool = Spool.open(dir, Spool.Options.unbounded(), disk)) {
            spool.append(request("before")).get(10, TimeUnit.SECONDS);
            disk.failForces(true);
            List<CompletableFuture<SpoolReceipt>> batch = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                batch.add(spool.append(request("batch-" + i)));
            }
            for (CompletableFuture<SpoolReceipt> entry : batch) {
                ExecutionException failed = assertThrows(ExecutionException.class, () -> entry.get(10,
                        TimeUnit.SECONDS));
                assertInstanceOf(SpoolWriteException.class, failed.getCause());
            }
            assertEquals(1, spool.entries(), "no entry of a batch whose fdatasync failed is counted");
        }
        assertEquals(List.of("key-before"), keysOnDisk(dir), "the batch was cut back: none of it is read");
    }
}
