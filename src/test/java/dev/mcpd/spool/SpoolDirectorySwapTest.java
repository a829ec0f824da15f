package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.ReliabilityReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool directory renamed away and replaced — by another directory or a link — while the relay runs (what another
 * user who may write its parent can do after the start's checks): the relay writes nothing more into what is there
 * now, says why, and keeps its dead letters out of it too.
 */
class SpoolDirectorySwapTest {

    @TempDir
    Path parent;

    private static SpoolRequest request(String key) {
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", key, Optional.of(new Credential("Authorization", "Bearer secret")), 1L,
                "{\"events\":[{}]}".getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> listing = Files.list(dir)) {
            return listing.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** Renames the spool directory away and puts {@code replacement} under its name; returns where it went. */
    private Path swap(Path relay, boolean link) throws IOException {
        Path moved = parent.resolve("relay.moved");
        Files.move(relay, moved);
        // Another user's directory, which everyone may write (an attacker's own would be owned by them: that takes
        // root to make here, and is refused the same way).
        Path theirs = Files.createDirectory(parent.resolve("theirs"));
        Files.setPosixFilePermissions(theirs, PosixFilePermissions.fromString("rwxrwxrwx"));
        if (link) {
            Files.createSymbolicLink(relay, theirs);
        } else {
            Files.move(theirs, relay);
        }
        return link ? theirs : relay;
    }

    private String appendAfterSwap(boolean link) throws Exception {
        Path relay = parent.resolve("relay");
        try (Spool spool = Spool.open(relay)) {
            spool.append(request("before")).get(10, TimeUnit.SECONDS);
            Path theirs = swap(relay, link);
            ExecutionException refused = assertThrows(ExecutionException.class,
                    () -> spool.append(request("after")).get(10, TimeUnit.SECONDS));
            assertTrue(refused.getCause() instanceof SpoolWriteException, refused.toString());
            String problem = spool.writeProblem().orElseThrow();
            assertEquals(List.of(), names(theirs), "nothing written into what is there now");
            return problem;
        }
    }

    @Test
    void aSpoolDirectoryReplacedByAnotherIsWrittenNoMore() throws Exception {
        String problem = appendAfterSwap(false);
        assertTrue(problem.contains("was replaced since the relay opened it (spool directory") && problem.contains(
                "is writable by every user"), problem);
    }

    @Test
    void aDirectoryTheRelaysOwnUserMakesAgainIsWrittenFromThenOn() throws Exception {
        // What an operator does after the directory was removed: mkdir, owner-only.
        Path relay = parent.resolve("relay");
        try (Spool spool = Spool.open(relay)) {
            spool.append(request("before")).get(10, TimeUnit.SECONDS);
            Files.move(relay, parent.resolve("relay.moved"));
            Files.createDirectory(relay);
            Files.setPosixFilePermissions(relay, PosixFilePermissions.fromString("rwx------"));
            // The write in flight when its segment went fails (its file is gone); the next is written in the new one.
            assertThrows(ExecutionException.class, () -> spool.append(request("lost")).get(10, TimeUnit.SECONDS));
            Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> spool.writeProblem().isEmpty());
            spool.append(request("after")).get(10, TimeUnit.SECONDS);
            assertTrue(names(relay).stream().anyMatch(name -> name.endsWith(".seg")), "a segment there: "
                    + names(relay));
        }
    }

    @Test
    void aSpoolDirectoryReplacedByALinkIsWrittenNoMore() throws Exception {
        String problem = appendAfterSwap(true);
        boolean said = problem.contains("was replaced since the relay opened it (a link is there now)");
        ReliabilityReport.assertHostile("a3-h6", "the spool directory renamed away while the relay runs, and a"
                        + " directory of another user (or a link to one) put under its name",
                "nothing more written there (the request refused 503, readiness says why); no dead letter there",
                said ? "the write refused (\"was replaced since the relay opened it (a link is there now)\"); nothing"
                        + " written there" : "NOT said: " + problem, said);
    }

    @Test
    void deadLettersAreNotWrittenIntoAReplacedDeadDirectory() throws Exception {
        Path relay = Files.createDirectory(parent.resolve("relay"));
        DeadLetters dead = new DeadLetters(relay);
        Path deadDir = relay.resolve(DeadLetters.DIRECTORY);
        Files.move(deadDir, relay.resolve("dead.moved"));
        Files.createDirectory(deadDir);
        Files.setPosixFilePermissions(deadDir, PosixFilePermissions.fromString("rwxrwxrwx"));
        SpoolEntry entry = new SpoolEntry(7, request("refused"));
        IOException refused = assertThrows(IOException.class, () -> dead.keep(entry,
                new DeadLetters.Refusal("http://up", 400, Instant.now(), "refused", new byte[0])));
        assertTrue(refused.getMessage().contains("was replaced since the relay opened it (spool directory"),
                refused.getMessage());
        assertEquals(List.of(), names(deadDir), "neither the entry nor its credential written there");
    }
}
