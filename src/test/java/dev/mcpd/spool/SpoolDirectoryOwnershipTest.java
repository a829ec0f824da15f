package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool another user could write is refused, as ssh refuses such a {@code ~/.ssh}; the Kubernetes fsGroup layout
 * (group-writable, setgid, the process's own group) is not. Real directories, real modes and owners.
 */
class SpoolDirectoryOwnershipTest {

    /** uid and gid 65534: nobody and nogroup on Linux. */
    private static final int NOBODY = 65534;

    @TempDir
    Path tmp;
    private Path relay;
    private ProcessIdentity me;

    @BeforeEach
    void identity() {
        relay = tmp.resolve("spool/relay");
        Optional<ProcessIdentity> current = ProcessIdentity.current();
        Assumptions.assumeTrue(current.isPresent(), "needs Linux: " + ProcessIdentity.STATUS + " says who we are");
        me = current.get();
    }

    @Test
    void theTestsOwnTemporaryDirectoryPasses() throws IOException {
        // Every other spool test opens its spool in a @TempDir: it must stay usable.
        assertEquals(0, mode(tmp) & 0077, "a @TempDir is owner-only: " + octal(mode(tmp)));
        SpoolDirectoryOwnership.check(tmp);
    }

    @Test
    void aWorldWritableSpoolDirectoryIsRefusedNamingItAndTheFix() throws IOException {
        Files.createDirectories(relay);
        setMode(relay, 0777);
        UnsafeSpoolDirectoryException refused = assertThrows(UnsafeSpoolDirectoryException.class,
                () -> Spool.open(relay));
        assertEquals("spool directory " + relay + " is writable by every user (mode 0777): another user could add"
                + " entries for the relay to deliver, or remove spooled data; fix it with: chmod 700 " + relay,
                refused.getMessage());
        assertFalse(Files.exists(relay.resolve(SpoolLock.FILE)), "nothing was created in it");
    }

    @Test
    void theStickyBitDoesNotMakeAWorldWritableSpoolDirectorySafe() throws IOException {
        Files.createDirectories(relay);
        setMode(relay, 01777);
        assertTrue(assertThrows(UnsafeSpoolDirectoryException.class, () -> Spool.open(relay)).getMessage()
                .contains("is writable by every user (mode 1777)"));
    }

    @Test
    void aWorldWritableDeadReplayOrCorruptDirectoryIsRefused() throws Exception {
        for (String child : List.of(DeadLetters.DIRECTORY, ReplayInbox.DIRECTORY, Quarantine.DIRECTORY)) {
            Path dir = relay.resolve(child);
            Files.createDirectories(dir);
            setMode(dir, 0777);
            UnsafeSpoolDirectoryException refused = assertThrows(UnsafeSpoolDirectoryException.class,
                    () -> Spool.open(relay), child);
            assertTrue(refused.getMessage().startsWith("spool directory " + dir + " is writable by every user"),
                    refused.getMessage());
            assertTrue(refused.getMessage().endsWith("chmod 700 " + dir), refused.getMessage());
            setMode(dir, 0700);
        }
        Spool.open(relay).close();
    }

    @Test
    void groupWritableByTheProcesssOwnGroupOpensAsKubernetesFsGroupMakesIt() throws Exception {
        Files.createDirectories(relay.resolve(ReplayInbox.DIRECTORY));
        int group = me.groups().iterator().next();
        for (Path dir : List.of(relay, relay.resolve(ReplayInbox.DIRECTORY))) {
            Files.setAttribute(dir, "unix:gid", group);
            setMode(dir, 02770); // what kubelet makes of a volume's directories with fsGroup
        }
        try (Spool spool = Spool.open(relay)) {
            spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k", Optional.empty(), 1L,
                    "{}".getBytes(StandardCharsets.UTF_8))).get(10, TimeUnit.SECONDS);
        }
        setMode(relay, 0770);
        Spool.open(relay).close();
    }

    @Test
    void groupWritableByAGroupTheProcessIsNotInIsRefused() throws IOException {
        Files.createDirectories(relay);
        int foreign = aGroupWeAreNotIn();
        try {
            Files.setAttribute(relay, "unix:gid", foreign);
        } catch (IOException e) {
            Assumptions.abort("needs root to give a directory to group " + foreign + " we are not in: " + e);
        }
        setMode(relay, 0770);
        UnsafeSpoolDirectoryException refused = assertThrows(UnsafeSpoolDirectoryException.class,
                () -> Spool.open(relay));
        assertEquals("spool directory " + relay + " is writable by group " + foreign + " (mode 0770), which uid "
                + me.uid() + " running mcpd is not in: fix it with: chmod 700 " + relay
                + " (or chgrp it to a group of that user)", refused.getMessage());
        setMode(relay, 0750); // that group may read it, not write it
        Spool.open(relay).close();
    }

    @Test
    void aSpoolDirectoryOwnedByAnotherUserIsRefused() throws IOException {
        Assumptions.assumeTrue(me.uid() != NOBODY, "runs as nobody itself");
        Files.createDirectories(relay);
        try {
            Files.setAttribute(relay, "unix:uid", NOBODY);
        } catch (IOException e) {
            Assumptions.abort("needs root to give a directory to another user (uid " + me.uid() + "): " + e);
        }
        setMode(relay, 0700);
        UnsafeSpoolDirectoryException refused = assertThrows(UnsafeSpoolDirectoryException.class,
                () -> Spool.open(relay));
        assertEquals("spool directory " + relay + " belongs to uid " + NOBODY + ", not to uid " + me.uid()
                + " running mcpd: its owner could add or remove entries; check what it holds, then fix it with:"
                + " chown -R " + me.uid() + " " + relay + " (or run mcpd as uid " + NOBODY + ")",
                refused.getMessage());
    }

    @Test
    void theDirectoriesTheRelayCreatesAreOwnerOnlyAndPass() throws Exception {
        try (Spool spool = Spool.open(relay)) {
            spool.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k", Optional.empty(), 1L,
                    "{}".getBytes(StandardCharsets.UTF_8))).get(10, TimeUnit.SECONDS);
            DeadLetters dead = new DeadLetters(relay);
            dead.keep(spool.next(Duration.ofSeconds(1)).orElseThrow(), new DeadLetters.Refusal("http://up", 400,
                    Instant.now(), "refused with 400", new byte[0]));
            assertTrue(new ReplayInbox(relay).handOver(dead, 1));
            Path damaged = tmp.resolve("damaged");
            Files.write(damaged, new byte[] {1, 2, 3});
            try (FileChannel source = FileChannel.open(damaged, StandardOpenOption.READ)) {
                Quarantine.keep(relay, 1, source, 0, 3);
            }
        }
        for (Path dir : List.of(relay.getParent(), relay, relay.resolve(DeadLetters.DIRECTORY),
                relay.resolve(ReplayInbox.DIRECTORY), relay.resolve(Quarantine.DIRECTORY))) {
            assertEquals("0700", octal(mode(dir)), dir.toString());
            assertEquals(me.uid(), (Integer) Files.getAttribute(dir, "unix:uid"), dir.toString());
        }
        SpoolDirectoryOwnership.check(relay);
        Spool.open(relay).close();
    }

    @Test
    void theProcessIsWhoOwnsTheFilesItCreates() throws IOException {
        Path file = Files.createFile(tmp.resolve("mine"));
        assertEquals(me.uid(), (Integer) Files.getAttribute(file, "unix:uid"));
        assertTrue(me.groups().contains((Integer) Files.getAttribute(file, "unix:gid")));
    }

    @Test
    void procStatusIsReadForTheEffectiveIdsAndEverySupplementaryGroup() {
        assertEquals(Optional.of(new ProcessIdentity(10001, Set.of(10001, 4, 27))), ProcessIdentity.parse(
                List.of("Name:\tjava", "Uid:\t1000\t10001\t10001\t10001", "Gid:\t1000\t10001\t10001\t10001",
                        "FDSize:\t256", "Groups:\t4 27 ")));
        assertEquals(Optional.of(new ProcessIdentity(0, Set.of(0))), ProcessIdentity.parse(
                List.of("Uid:\t0\t0\t0\t0", "Gid:\t0\t0\t0\t0", "Groups:\t ")));
        assertEquals(Optional.empty(), ProcessIdentity.parse(List.of("Uid:\t0\t0\t0\t0", "Gid:\t0\t0\t0\t0")));
    }

    /** A group from /etc/group this process is not in, else a number no group of ours has. */
    private int aGroupWeAreNotIn() throws IOException {
        Path groups = Path.of("/etc/group");
        if (Files.isReadable(groups)) {
            for (String line : Files.readAllLines(groups)) {
                String[] fields = line.split(":");
                if (fields.length >= 3 && fields[2].matches("[0-9]+") && !me.groups().contains(
                        Integer.parseInt(fields[2]))) {
                    return Integer.parseInt(fields[2]);
                }
            }
        }
        int gid = 54321;
        while (me.groups().contains(gid)) {
            gid++;
        }
        return gid;
    }

    /**
     * docs/spool.md's three refusal lines are what the check says, for a relay running as uid 10001 in group 10001 and
     * the page's directories (the test's own stand in for them). Setting another owner or group needs root.
     */
    @Test
    void theSpoolPagesRefusalsAreWhatTheCheckSays() throws IOException {
        Assumptions.assumeTrue(me.uid() == 0, "chown to another user needs root (CI runs as root)");
        List<String> documented = Files.readString(Path.of("docs/spool.md")).lines()
                .filter(line -> line.startsWith("mcpd: spool directory ")).map(line -> line.substring(6)).toList();
        assertEquals(3, documented.size(), "the page shows three refusals");
        ProcessIdentity relayUser = new ProcessIdentity(10001, Set.of(10001));
        Path open = Files.createDirectories(tmp.resolve("tmp/spool/relay"));
        setMode(open, 0777);
        Path foreign = Files.createDirectories(tmp.resolve("srv/spool/relay"));
        Files.setAttribute(foreign, "unix:uid", NOBODY);
        Path group = Files.createDirectories(tmp.resolve("srv2/spool/relay"));
        Files.setAttribute(group, "unix:uid", 10001);
        Files.setAttribute(group, "unix:gid", 100);
        setMode(group, 0770);
        List<String> said = List.of(
                SpoolDirectoryOwnership.problem(open, relayUser).orElseThrow().replace(tmp.toString(), ""),
                SpoolDirectoryOwnership.problem(foreign, relayUser).orElseThrow().replace(tmp.toString(), ""),
                SpoolDirectoryOwnership.problem(group, relayUser).orElseThrow().replace(tmp + "/srv2", "/srv"));
        assertEquals(documented, said);
    }

    private static void setMode(Path dir, int mode) throws IOException {
        Files.setAttribute(dir, "unix:mode", mode); // chmod(2): unlike PosixFilePermission, it sets setgid and sticky
    }

    private static int mode(Path dir) throws IOException {
        return (Integer) Files.getAttribute(dir, "unix:mode") & 07777;
    }

    private static String octal(int mode) {
        return String.format("%04o", mode);
    }
}
