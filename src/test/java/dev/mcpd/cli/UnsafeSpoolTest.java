package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.relay.RelayApplication;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mcpd relay} refuses a spool another user could write with one line naming the directory and the fix, exit
 * status 2, before anything starts — the defect: {@code <spool-dir>/relay} made 0777 by another user, who then had
 * the relay deliver their entry from {@code replay/} with its own upstream key.
 */
class UnsafeSpoolTest {

    @TempDir
    Path tmp;
    private Path relaySpool;
    private Map<String, String> env;

    @BeforeEach
    void spoolDirectory() throws IOException {
        relaySpool = Files.createDirectories(tmp.resolve("spool/relay"));
        env = Map.of("MCPD_SPOOL_DIR", tmp.resolve("spool").toString(), "MCPD_UPSTREAMS", "http://127.0.0.1:9",
                "MCPD_LISTEN", "127.0.0.1:0");
    }

    @Test
    void aWorldWritableSpoolDirectoryIsOneLineNamingItAndTheFix() throws IOException {
        setMode(relaySpool, 0777);
        run(env, "relay").assertUsageErrorLine("mcpd: spool directory " + relaySpool + " is writable by every user"
                + " (mode 0777): another user could add entries for the relay to deliver, or remove spooled data;"
                + " fix it with: chmod 700 " + relaySpool);
    }

    @Test
    void theRealRelayIsNotStartedEither() throws IOException {
        setMode(relaySpool, 0777);
        McpdRun refused = run(env, config -> RelayApplication.run(config), "relay");
        assertEquals(2, refused.status(), refused.err());
        assertEquals(1, refused.err().lines().count(), refused.err());
        assertTrue(refused.err().endsWith("chmod 700 " + relaySpool + System.lineSeparator()), refused.err());
        assertFalse(Files.exists(relaySpool.resolve("spool.lock")), "the spool was not opened");
    }

    @Test
    void aWorldWritableReplayDirectoryIsRefused() throws IOException {
        Path replay = Files.createDirectories(relaySpool.resolve("replay"));
        setMode(replay, 0777);
        McpdRun refused = run(env, "relay").assertUsageError();
        assertTrue(refused.err().startsWith("mcpd: spool directory " + replay + " is writable by every user"),
                refused.err());
        assertTrue(refused.err().contains("chmod 700 " + replay), refused.err());
    }

    @Test
    void aWorldWritableDeadDirectoryIsRefused() throws IOException {
        Path dead = Files.createDirectories(relaySpool.resolve("dead"));
        setMode(dead, 0777);
        assertTrue(run(env, "relay").assertUsageError().err().contains("chmod 700 " + dead));
    }

    @Test
    void groupWritableByAGroupTheRelayIsNotInIsRefused() throws IOException {
        int foreign = 54321;
        try {
            Files.setAttribute(relaySpool, "unix:gid", foreign);
        } catch (IOException e) {
            Assumptions.abort("needs root to give a directory to a group the test process is not in: " + e);
        }
        setMode(relaySpool, 0770);
        McpdRun refused = run(env, "relay").assertUsageError();
        assertTrue(refused.err().contains(relaySpool + " is writable by group " + foreign + " (mode 0770)"),
                refused.err());
        assertTrue(refused.err().contains("chmod 700 " + relaySpool), refused.err());
    }

    @Test
    void groupWritableByTheRelaysOwnGroupStartsAsUnderKubernetesFsGroup() throws IOException {
        setMode(relaySpool, 02770); // group: the test process's own, as the directory was created by it
        McpdRun started = run(env, "relay");
        assertEquals(0, started.status(), started.err());
        assertEquals(relaySpool, started.relayConfig().relay().relaySpoolDir());
    }

    @Test
    void aSpoolDirectoryThatDoesNotExistYetStarts() throws IOException {
        Files.delete(relaySpool);
        assertEquals(0, run(env, "relay").status());
    }

    private static void setMode(Path dir, int mode) throws IOException {
        Files.setAttribute(dir, "unix:mode", mode); // chmod(2), setgid included
    }
}
