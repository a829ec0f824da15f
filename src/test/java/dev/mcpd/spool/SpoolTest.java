package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpoolTest {

    @TempDir
    Path dir;

    private static SpoolRequest request(String target, byte[] body) {
        return new SpoolRequest("POST", target, "application/x-protobuf", "gzip", "relay-" + target,
                Optional.empty(), 1_700_000_000_000L, body);
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    void anAppendedEntryIsReadBackWithEveryFieldAndEveryByte() throws Exception {
        byte[] body = randomBytes(70_000, 1);
        SpoolRequest sent = new SpoolRequest("POST", "/v1/traces?tenant=a", "application/x-protobuf", "gzip",
                "sender-key-1", Optional.of(new Credential("Authorization", "Bearer s3cret")), 1_700_000_123_456L,
                body);
        SpoolReceipt receipt;
        try (Spool spool = Spool.open(dir)) {
            receipt = spool.append(sent).get(10, TimeUnit.SECONDS);
        }
        List<SpoolEntry> entries = SpoolReader.read(dir).entries();
        assertEquals(1, entries.size());
        SpoolEntry entry = entries.get(0);
        assertEquals(receipt.seq(), entry.seq());
        SpoolRequest read = entry.request();
        assertEquals(sent.method(), read.method());
        assertEquals(sent.target(), read.target());
        assertEquals(sent.contentType(), read.contentType());
        assertEquals(sent.contentEncoding(), read.contentEncoding());
        assertEquals(sent.idempotencyKey(), read.idempotencyKey());
        assertEquals(sent.credential(), read.credential());
        assertEquals(sent.receivedAtMillis(), read.receivedAtMillis());
        assertArrayEquals(body, read.body());
        assertTrue(receipt.storedBytes() > body.length, "stored size counts metadata too");
    }

    @Test
    void anEmptyBodyIsKeptAsEmpty() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            spool.append(request("/empty", new byte[0])).get(10, TimeUnit.SECONDS);
        }
        assertArrayEquals(new byte[0], SpoolReader.read(dir).entries().get(0).request().body());
    }

    @Test
    void concurrentAppendsAreAllKeptAndShareForcedCommits() throws Exception {
        int senders = 32;
        int perSender = 40;
        List<Future<SpoolReceipt>> receipts = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        try (Spool spool = Spool.open(dir)) {
            for (int s = 0; s < senders; s++) {
                int sender = s;
                receipts.add(pool.submit(() -> {
                    SpoolReceipt last = null;
                    for (int i = 0; i < perSender; i++) {
                        String target = "/s" + sender + "/" + i;
                        last = spool.append(request(target, target.getBytes(StandardCharsets.UTF_8)))
                                .get(30, TimeUnit.SECONDS);
                    }
                    return last;
                }));
            }
            for (Future<SpoolReceipt> receipt : receipts) {
                receipt.get(60, TimeUnit.SECONDS);
            }
            assertEquals((long) senders * perSender, spool.entries());
            assertTrue(spool.commits() < (long) senders * perSender,
                    "concurrent appends share commits (group commit): " + spool.commits() + " commits");
        } finally {
            pool.shutdownNow();
        }
        List<SpoolEntry> entries = SpoolReader.read(dir).entries();
        assertEquals(senders * perSender, entries.size());
        Set<String> targets = new HashSet<>();
        long previousSeq = 0;
        for (SpoolEntry entry : entries) {
            assertTrue(entry.seq() > previousSeq, "file order is sequence order");
            previousSeq = entry.seq();
            assertEquals(entry.request().target(), new String(entry.request().body(), StandardCharsets.UTF_8));
            targets.add(entry.request().target());
        }
        assertEquals(senders * perSender, targets.size());
    }

    @Test
    void sequenceNumbersOnlyGrowAcrossRestartsEvenWhenTheSpoolIsEmpty() throws Exception {
        long first;
        try (Spool spool = Spool.open(dir)) {
            first = spool.append(request("/a", new byte[] {1})).get(10, TimeUnit.SECONDS).seq();
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(1, spool.entries()); // this start's new, empty segment now takes appends
        }
        // Delivery removes sealed segments once all their entries are done: here, every one that held an entry.
        for (Path segment : SegmentScan.segmentsIn(dir)) {
            if (!SegmentScan.of(segment).entries().isEmpty()) {
                Files.delete(segment);
            }
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(0, spool.entries());
        }
        try (Spool spool = Spool.open(dir)) {
            long second = spool.append(request("/b", new byte[] {2})).get(10, TimeUnit.SECONDS).seq();
            assertTrue(second > first, second + " > " + first);
        }
    }

    @Test
    void credentialsLiveOnlyInAnOwnerOnlyFileApartFromBodies() throws Exception {
        String secret = "Bearer very-secret-sender-key";
        try (Spool spool = Spool.open(dir)) {
            for (int i = 0; i < 3; i++) {
                spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k" + i,
                        Optional.of(new Credential("Authorization", secret)), 1L, "{}".getBytes()))
                        .get(10, TimeUnit.SECONDS);
            }
        }
        List<Path> credentialFiles = new ArrayList<>();
        for (Path file : Files.list(dir).toList()) {
            String name = file.getFileName().toString();
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)), name);
            String content = Files.readString(file, StandardCharsets.ISO_8859_1);
            if (name.endsWith(".cred")) {
                credentialFiles.add(file);
                assertEquals(1, content.split("very-secret-sender-key", -1).length - 1,
                        "a credential is written once per segment, not once per entry");
            } else {
                assertFalse(content.contains("very-secret-sender-key"), name + " must not hold the key");
            }
        }
        assertEquals(1, credentialFiles.size());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        SpoolReader.read(dir).entries().forEach(e -> assertEquals(secret, e.request().credential().get().value()));
    }

    @Test
    void aTornLastRecordIsDetectedAndNeverReadAsAnEntry() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            for (int i = 0; i < 3; i++) {
                spool.append(request("/t" + i, randomBytes(1000, i))).get(10, TimeUnit.SECONDS);
            }
        }
        Path segment = onlySegmentWithEntries();
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            channel.truncate(channel.size() - 10); // a crash tore the last record
        }
        SpoolReader.Contents contents = SpoolReader.read(dir);
        assertEquals(2, contents.entries().size());
        assertEquals(1, contents.damage().size());
        try (Spool spool = Spool.open(dir)) {
            assertEquals(2, spool.entries());
            spool.append(request("/after", new byte[] {9})).get(10, TimeUnit.SECONDS);
        }
        assertEquals(List.of("/t0", "/t1", "/after"),
                SpoolReader.read(dir).entries().stream().map(e -> e.request().target()).toList());
    }

    @Test
    void aRecordWhoseBytesChangedFailsItsChecksum() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            spool.append(request("/ok", randomBytes(100, 1))).get(10, TimeUnit.SECONDS);
            spool.append(request("/flipped", randomBytes(100, 2))).get(10, TimeUnit.SECONDS);
        }
        Path segment = onlySegmentWithEntries();
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long at = channel.size() - 5; // inside the last body
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            one.flip();
            byte flipped = (byte) (one.get() ^ 0x40);
            channel.write(ByteBuffer.wrap(new byte[] {flipped}), at);
        }
        SpoolReader.Contents contents = SpoolReader.read(dir);
        assertEquals(List.of("/ok"), contents.entries().stream().map(e -> e.request().target()).toList());
        assertTrue(contents.damage().get(0).contains("checksum"), contents.damage().toString());
    }

    @Test
    void segmentsRollAtTheirTargetSizeAndAreReadInOrder() throws Exception {
        try (Spool spool = Spool.open(dir, 4096)) {
            for (int i = 0; i < 20; i++) {
                spool.append(request("/r" + i, randomBytes(1000, i))).get(10, TimeUnit.SECONDS);
            }
        }
        assertTrue(SegmentScan.segmentsIn(dir).size() >= 4, "several segments");
        List<SpoolEntry> entries = SpoolReader.read(dir).entries();
        assertEquals(20, entries.size());
        for (int i = 0; i < 20; i++) {
            assertEquals("/r" + i, entries.get(i).request().target());
            assertArrayEquals(randomBytes(1000, i), entries.get(i).request().body());
        }
    }

    @Test
    void closingCommitsWhatIsAlreadyQueuedAndRefusesLaterAppends() throws Exception {
        List<CompletableFuture<SpoolReceipt>> receipts = new ArrayList<>();
        Spool spool = Spool.open(dir);
        for (int i = 0; i < 100; i++) {
            receipts.add(spool.append(request("/q" + i, new byte[] {(byte) i})));
        }
        spool.close();
        for (CompletableFuture<SpoolReceipt> receipt : receipts) {
            assertTrue(receipt.isDone() && !receipt.isCompletedExceptionally());
        }
        assertTrue(spool.append(request("/late", new byte[0])).isCompletedExceptionally());
        assertEquals(100, SpoolReader.read(dir).entries().size());
    }

    @Test
    void entriesAndBytesAreRecountedFromDiskAtStart() throws Exception {
        long bytes = 0;
        try (Spool spool = Spool.open(dir)) {
            for (int i = 0; i < 5; i++) {
                bytes += spool.append(request("/c" + i, randomBytes(300, i))).get(10, TimeUnit.SECONDS)
                        .storedBytes();
            }
            assertEquals(bytes, spool.bytes());
        }
        try (Spool spool = Spool.open(dir)) {
            assertEquals(5, spool.entries());
            assertEquals(bytes, spool.bytes());
        }
    }

    private Path onlySegmentWithEntries() throws IOException {
        List<Path> withEntries = new ArrayList<>();
        for (Path segment : SegmentScan.segmentsIn(dir)) {
            if (Files.size(segment) > 0) {
                withEntries.add(segment);
            }
        }
        assertEquals(1, withEntries.size());
        return withEntries.get(0);
    }
}
