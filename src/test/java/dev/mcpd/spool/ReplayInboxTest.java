package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hand-over of replayed dead letters: every state a crash can leave is taken up, none loses one. */
class ReplayInboxTest {

    @TempDir
    Path dir;
    private DeadLetters dead;
    private ReplayInbox inbox;

    @BeforeEach
    void oneDeadLetterWithACredential() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-1",
                    Optional.of(new Credential("x-mcpd-key", "secret")), 1L, "{}".getBytes(StandardCharsets.UTF_8)))
                    .get(10, TimeUnit.SECONDS);
            SpoolEntry entry = spool.next(Duration.ofSeconds(1)).orElseThrow();
            dead = new DeadLetters(dir);
            dead.keep(entry, new DeadLetters.Refusal("http://up", 400, Instant.now(), "refused with 400", new byte[0]));
            spool.done(entry.seq());
        }
        inbox = new ReplayInbox(dir);
    }

    private Path handedOver() {
        return dir.resolve("replay").resolve(SpoolFiles.baseName(1));
    }

    @Test
    void aHandOverMovesTheEntryAndItsCredentialOwnerOnlyAndTheRelayTakesItOnce() throws Exception {
        assertTrue(inbox.handOver(dead, 1));
        assertEquals(List.of(), dead.seqsOnDisk());
        for (Path file : Files.list(handedOver()).toList()) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)), file.toString());
        }
        assertFalse(inbox.handOver(dead, 1), "no longer in dead/");
        try (Spool spool = Spool.open(dir)) {
            ReplayInbox.Adoption adoption = inbox.adoptInto(DirectAppend.to(spool), 5L);
            assertEquals(1, adoption.taken().size());
            assertEquals(adoption.taken().get(0).seq(), inbox.takenAs(1).orElseThrow(), "the receipt names it");
            assertTrue(inbox.takenAs(1).isEmpty(), "a receipt is read once");
            assertEquals(0, inbox.adoptInto(DirectAppend.to(spool), 6L).taken().size(), "taken once");
            assertEquals(Optional.of(new Credential("x-mcpd-key", "secret")),
                    spool.next(Duration.ofSeconds(1)).orElseThrow().request().credential());
        }
    }

    @Test
    void anInboxEntryThatCannotBeReadGoesToCorruptAndTheOthersAreTaken() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-2", Optional.empty(), 1L,
                    "{}".getBytes(StandardCharsets.UTF_8))).get(10, TimeUnit.SECONDS);
            SpoolEntry second = spool.next(Duration.ofSeconds(1)).orElseThrow();
            dead.keep(second, new DeadLetters.Refusal("http://up", 400, Instant.now(), "refused", new byte[0]));
            spool.done(second.seq());
        }
        assertTrue(inbox.handOver(dead, 1));
        assertTrue(inbox.handOver(dead, 2));
        Files.delete(handedOver().resolve(SpoolFiles.baseName(1) + ".cred")); // its credential lost on the way
        try (Spool spool = Spool.open(dir)) {
            ReplayInbox.Adoption adoption = inbox.adoptInto(DirectAppend.to(spool), 5L);
            assertEquals(List.of(2L), adoption.taken().stream().map(ReplayInbox.Taken::deadSeq).toList(),
                    "the readable one is taken, not held up behind the damaged one");
            assertEquals(1, adoption.damaged().size());
            assertEquals(1, adoption.damaged().get(0).deadSeq());
            assertTrue(Files.isDirectory(dir.resolve("corrupt").resolve("replay-" + SpoolFiles.baseName(1))),
                    "kept for a person to look at");
            assertEquals(0, inbox.waiting().entries());
            assertEquals(0, inbox.adoptInto(DirectAppend.to(spool), 6L).damaged().size(), "and it is not tried again");
        }
    }

    @Test
    void aCliKilledAfterTheRenameLeavesItInBothAndTheNextHandOverOnlyFinishesTheRemoval() throws Exception {
        assertTrue(inbox.handOver(dead, 1));
        // as if the CLI died before removing the dead letter: put it back in dead/
        try (Spool spool = Spool.open(dir)) {
            spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-1", Optional.empty(),
                    1L, "{}".getBytes(StandardCharsets.UTF_8))).get(10, TimeUnit.SECONDS);
            SpoolEntry again = spool.next(Duration.ofSeconds(1)).orElseThrow();
            dead.keep(new SpoolEntry(1, again.request()), new DeadLetters.Refusal("http://up", 400, Instant.now(),
                    "refused", new byte[0]));
            spool.done(again.seq());
        }
        assertTrue(inbox.handOver(dead, 1));
        assertEquals(List.of(), dead.seqsOnDisk());
        assertEquals(1, inbox.waiting().entries(), "one copy waits, not two");
    }

    @Test
    void aRelayKilledWhileRemovingLeavesADirectoryWithoutItsEntryWhichIsRemovedNotAppended() throws Exception {
        assertTrue(inbox.handOver(dead, 1));
        Files.delete(handedOver().resolve(SpoolFiles.baseName(1) + ".entry"));
        try (Spool spool = Spool.open(dir)) {
            assertEquals(0, inbox.adoptInto(DirectAppend.to(spool), 5L).taken().size());
            assertEquals(0, spool.entries());
        }
        assertFalse(Files.exists(handedOver()));
    }

    @Test
    void aCopyAKilledCliLeftHalfMadeIsNeverTakenAndGoesAfterAnHour() throws Exception {
        Path half = Files.createDirectories(dir.resolve("replay").resolve(".00000000000000000001.999.tmp"));
        Files.writeString(half.resolve(SpoolFiles.baseName(1) + ".entry"), "torn");
        try (Spool spool = Spool.open(dir)) {
            assertEquals(0, inbox.adoptInto(DirectAppend.to(spool), 5L).taken().size());
            assertTrue(Files.exists(half), "it may still be being written");
            Files.setLastModifiedTime(half, FileTime.from(Instant.now().minus(Duration.ofHours(2))));
            inbox.adoptInto(DirectAppend.to(spool), 5L);
            assertFalse(Files.exists(half));
            assertEquals(0, spool.entries());
        }
        assertEquals(List.of(1L), dead.seqsOnDisk(), "the dead letter itself is untouched");
    }

    @Test
    void anEntryThatDoesNotFitTheBoundWaitsInTheInbox() throws Exception {
        assertTrue(inbox.handOver(dead, 1));
        try (Spool spool = Spool.open(dir, Spool.Options.unbounded().withMaxBytes(10))) {
            ReplayInbox.Adoption adoption = inbox.adoptInto(DirectAppend.to(spool), 5L);
            assertTrue(adoption.spoolFull());
            assertEquals(0, adoption.taken().size());
        }
        assertEquals(1, inbox.waiting().entries());
    }

    @Test
    void aSecondSpoolOnTheSameDirectoryIsRefusedWhileTheFirstIsOpen() throws Exception {
        try (Spool spool = Spool.open(dir)) {
            assertTrue(SpoolLock.heldByARelay(dir));
            IOException refused = assertThrows(IOException.class, () -> Spool.open(dir));
            assertEquals("another relay has it open (spool.lock is locked): one relay per spool directory",
                    refused.getMessage());
        }
        assertFalse(SpoolLock.heldByARelay(dir));
        Spool.open(dir).close();
    }
}
