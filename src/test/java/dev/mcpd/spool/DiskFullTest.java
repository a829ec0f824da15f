package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real full disk (ENOSPC from a 512 KiB tmpfs), not an injected fault: an append that cannot be written fails with
 * {@link SpoolWriteException}, nothing of it stays on disk, the spool takes appends again once there is room, and every
 * entry it acknowledged on the way is read back whole after a reopen.
 */
class DiskFullTest {

    static final Duration WAIT = Duration.ofSeconds(10);
    /** Larger than a page, so an entry never fits in the slack at the end of the segment's last page. */
    static final int BODY_BYTES = 9000;

    @TempDir
    Path tmp;

    private SmallTmpfs disk;
    private Spool spool;
    /** Every acknowledged request, by seq. */
    private final Map<Long, SpoolRequest> acknowledged = new LinkedHashMap<>();
    private long acknowledgedBytes;
    private int counter;

    @BeforeEach
    void mountSmallDisk() {
        disk = SmallTmpfs.mount(tmp.resolve("small"), "512k");
    }

    @AfterEach
    void unmount() throws IOException {
        try {
            if (spool != null) {
                spool.close();
            }
        } finally {
            if (disk != null) {
                disk.close();
            }
        }
    }

    private Path spoolDir() {
        return disk.path().resolve("relay");
    }

    private Spool open(long maxBytes) throws IOException {
        spool = Spool.open(spoolDir(), new Spool.Options(Spool.DEFAULT_SEGMENT_TARGET_BYTES, maxBytes));
        return spool;
    }

    /**
     * Requests of one stored size (fixed-width numbers; every credential the same length), most of them from three
     * senders and every fourth with a credential never seen before, so that a failed append may also have to write
     * to the segment's credential file.
     */
    private SpoolRequest nextRequest() {
        int n = counter++;
        byte[] body = new byte[BODY_BYTES];
        new Random(n).nextBytes(body);
        String credential = n % 4 == 3 ? String.format("Bearer new-%04d", n) : "Bearer sender-" + n % 3;
        return new SpoolRequest("POST", String.format("/v1/logs?n=%04d", n), "application/x-protobuf", "",
                String.format("key-%04d", n), Optional.of(new Credential("Authorization", credential)),
                1_700_000_000_000L + n, body);
    }

    /** Appends one request and expects it durable. */
    private void appendOk() throws Exception {
        SpoolRequest request = nextRequest();
        SpoolReceipt receipt = spool.append(request).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        acknowledged.put(receipt.seq(), request);
        acknowledgedBytes += receipt.storedBytes();
    }

    /** Appends one request and expects it to fail; returns why. */
    private Throwable appendFails() {
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> spool.append(nextRequest()).get(WAIT.toSeconds(), TimeUnit.SECONDS));
        return failed.getCause();
    }

    private static long segmentBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".seg")).mapToLong(f -> f.toFile().length())
                    .sum();
        }
    }

    private static void assertSameRequest(SpoolRequest sent, SpoolEntry read) {
        String what = "entry " + read.seq();
        assertEquals(sent.target(), read.request().target(), what);
        assertEquals(sent.idempotencyKey(), read.request().idempotencyKey(), what);
        assertEquals(sent.credential(), read.request().credential(), what + " keeps its own credential");
        assertEquals(sent.receivedAtMillis(), read.request().receivedAtMillis(), what);
        assertArrayEquals(sent.body(), read.request().body(), what + ": the body byte for byte");
    }

    /** The spool on disk holds exactly the acknowledged entries, whole and byte for byte, and nothing else. */
    private void assertOnDiskExactlyTheAcknowledgedEntries() throws IOException {
        SpoolReader.Contents onDisk = SpoolReader.read(spoolDir());
        assertEquals(List.of(), onDisk.damage(), "no torn or corrupt record");
        assertEquals(new ArrayList<>(acknowledged.keySet()), onDisk.entries().stream().map(SpoolEntry::seq).toList());
        for (SpoolEntry entry : onDisk.entries()) {
            assertSameRequest(acknowledged.get(entry.seq()), entry);
        }
        assertEquals(acknowledgedBytes, segmentBytes(spoolDir()),
                "the segment files hold the acknowledged entries and not one byte more");
    }

    @Test
    void appendsFailWithSpoolWriteExceptionOnceTheFileSystemIsFull() throws Exception {
        open(Long.MAX_VALUE);
        appendOk();
        appendOk();
        disk.fill();
        for (int i = 0; i < 5; i++) {
            Throwable why = appendFails();
            assertInstanceOf(SpoolWriteException.class, why, String.valueOf(why));
            assertTrue(String.valueOf(why.getMessage()).contains("No space left on device"), why.getMessage());
        }
        assertEquals(2, spool.entries());
        assertEquals(acknowledgedBytes, spool.bytes(), "failed appends add nothing to the spool's size");
        assertEquals(2, spool.accepted());
    }

    @Test
    void aFailedAppendLeavesNoPartialOrCorruptEntryOnDisk() throws Exception {
        open(Long.MAX_VALUE);
        for (int i = 0; i < 3; i++) {
            appendOk();
        }
        disk.fill();
        for (int i = 0; i < 5; i++) {
            assertInstanceOf(SpoolWriteException.class, appendFails());
        }
        assertOnDiskExactlyTheAcknowledgedEntries();
    }

    @Test
    void appendsSucceedAgainOnceSpaceIsFreed() throws Exception {
        // A bound with room for only four more entries: failed appends must give back what they reserved.
        long entryBytes = entrySize();
        open(7 * entryBytes);
        for (int i = 0; i < 3; i++) {
            appendOk();
        }
        disk.fill();
        for (int i = 0; i < 10; i++) {
            assertInstanceOf(SpoolWriteException.class, appendFails());
        }
        disk.free();
        for (int i = 0; i < 4; i++) {
            appendOk();
        }
        assertEquals(7, spool.entries());
        assertInstanceOf(SpoolFullException.class, appendFails(), "and the bound is where it was");
        assertOnDiskExactlyTheAcknowledgedEntries();
    }

    @Test
    void aReopenedSpoolReadsEveryAcknowledgedEntryByteForByte() throws Exception {
        open(Long.MAX_VALUE);
        appendOk();
        appendOk();
        disk.fill();
        for (int i = 0; i < 4; i++) {
            appendFails();
        }
        disk.free();
        appendOk();
        disk.fill();
        appendFails();
        disk.free();
        appendOk();
        spool.close();
        spool = null;

        open(Long.MAX_VALUE);
        assertEquals(acknowledged.size(), spool.entries());
        assertEquals(acknowledgedBytes, spool.bytes());
        List<SpoolEntry> delivered = new ArrayList<>();
        for (int i = 0; i < acknowledged.size(); i++) {
            delivered.add(spool.next(WAIT).orElseThrow());
        }
        assertTrue(spool.next(Duration.ofMillis(50)).isEmpty(), "nothing but the acknowledged entries");
        assertEquals(new ArrayList<>(acknowledged.keySet()), delivered.stream().map(SpoolEntry::seq).toList());
        for (SpoolEntry entry : delivered) {
            assertSameRequest(acknowledged.get(entry.seq()), entry);
        }
    }

    @Test
    void concurrentAppendsAtTheEdgeOfTheDiskKeepExactlyTheAcknowledgedOnes() throws Exception {
        open(Long.MAX_VALUE);
        appendOk();
        disk.fill();
        disk.free();
        // Leave room for a few entries only, then let many race for it: some batches fit, the rest fail whole.
        Files.write(disk.path().resolve("most-of-it"), new byte[(int) (Files.getFileStore(disk.path())
                .getUsableSpace() - 4 * BODY_BYTES)]);
        List<SpoolRequest> requests = new ArrayList<>();
        List<CompletableFuture<SpoolReceipt>> receipts = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            SpoolRequest request = nextRequest();
            requests.add(request);
            receipts.add(spool.append(request));
        }
        int failed = 0;
        for (int i = 0; i < receipts.size(); i++) {
            try {
                SpoolReceipt receipt = receipts.get(i).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                acknowledged.put(receipt.seq(), requests.get(i));
                acknowledgedBytes += receipt.storedBytes();
            } catch (ExecutionException e) {
                assertInstanceOf(SpoolWriteException.class, e.getCause());
                failed++;
            }
        }
        assertTrue(failed > 0, "the disk ran out of room");
        assertEquals(acknowledged.size(), spool.entries());
        assertOnDiskExactlyTheAcknowledgedEntries();
    }

    /** The stored size of one of this test's requests, measured on the ordinary disk. */
    private long entrySize() throws Exception {
        Path scratch = Files.createTempDirectory(tmp, "scratch");
        try (Spool measuring = Spool.open(scratch)) {
            return measuring.append(new SpoolRequest("POST", "/v1/logs?n=0000", "application/x-protobuf", "",
                    "key-0000", Optional.of(new Credential("Authorization", "Bearer sender-0")), 0,
                    new byte[BODY_BYTES])).get(WAIT.toSeconds(), TimeUnit.SECONDS).storedBytes();
        }
    }
}
