package dev.mcpd.relay;

import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.spool.SpoolReader;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, defect 6: a 2xx is a promise only if the request is where the next start will find it. A spool directory
 * removed, or made read-only, under a running relay gets 503 and an unready relay — not a 202 into a deleted file —
 * and the relay takes requests again once the directory is back.
 */
class SpoolVanishesTest {


    @TempDir
    Path dir;

    private static HttpResponse<String> post(RunningRelay relay, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> readyz(RunningRelay relay) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri("/readyz")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static boolean onDisk(Path spoolDir, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return SpoolReader.read(spoolDir).entries().stream().anyMatch(e -> Arrays.equals(e.request().body(), bytes));
    }

    private static String answer(HttpResponse<String> response) {
        return response.statusCode() + response.headers().firstValue("Retry-After").map(s -> " Retry-After: " + s)
                .orElse("") + " " + response.body().strip();
    }

    private static void removeTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    @Test
    void aSpoolDirectoryRemovedWhileRunningIsRefused503UntilItIsBack() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            assertEquals(202, post(relay, "before").statusCode());
            removeTree(relay.spoolDir());
            HttpResponse<String> refused = post(relay, "while-gone-" + UUID.randomUUID());
            HttpResponse<String> unready = readyz(relay);
            Files.createDirectories(relay.spoolDir());
            await().atMost(PATIENCE).until(() -> readyz(relay).statusCode() == 200);
            String after = "after-" + UUID.randomUUID();
            HttpResponse<String> accepted = post(relay, after);
            assertHostile("s1", "rm -rf of the spool directory under a running relay, then a POST; later mkdir",
                    "503 + Retry-After: 5 and /readyz 503 'spool not writable' while it is gone; 202 again, on disk,"
                            + " once it is back",
                    answer(refused) + "; /readyz " + answer(unready) + "; after mkdir " + accepted.statusCode()
                            + (onDisk(relay.spoolDir(), after) ? ", on disk" : ", NOT on disk"),
                    refused.statusCode() == 503 && "5".equals(refused.headers().firstValue("Retry-After").orElse(""))
                            && unready.statusCode() == 503 && unready.body().contains("spool not writable")
                            && accepted.statusCode() == 202 && onDisk(relay.spoolDir(), after));
        }
    }

    @Test
    void aSpoolDirectoryMadeReadOnlyIsRefused503UntilItIsWritableAgain() throws Exception {
        try (TestUpstream upstream = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503));
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            assertEquals(202, post(relay, "before").statusCode());
            ReadOnly readOnly = ReadOnly.make(relay.spoolDir());
            HttpResponse<String> refused;
            HttpResponse<String> unready;
            try {
                refused = post(relay, "while-read-only-" + UUID.randomUUID());
                unready = readyz(relay);
            } finally {
                readOnly.undo();
            }
            await().atMost(PATIENCE).until(() -> readyz(relay).statusCode() == 200);
            String after = "after-" + UUID.randomUUID();
            HttpResponse<String> accepted = post(relay, after);
            assertHostile("s2", "the spool directory made read-only (" + readOnly.how() + ") under a running relay",
                    "503 + Retry-After: 5 and /readyz 503 while it is; 202 again, on disk, once it is writable",
                    answer(refused) + "; /readyz " + answer(unready) + "; writable again: " + accepted.statusCode(),
                    refused.statusCode() == 503 && unready.statusCode() == 503
                            && accepted.statusCode() == 202 && onDisk(relay.spoolDir(), after));
        }
    }

    /**
     * A directory made read-only for the relay: a read-only bind mount over it when the tests run as root (root
     * writes through permission bits, but not through a read-only mount), else its permission bits.
     */
    record ReadOnly(Path dir, boolean mounted) {
        static ReadOnly make(Path dir) throws Exception {
            if (run("mount", "--bind", dir.toString(), dir.toString()) == 0) {
                if (run("mount", "-o", "remount,bind,ro", dir.toString()) != 0) {
                    run("umount", dir.toString());
                    throw new IllegalStateException("cannot remount " + dir + " read-only");
                }
                return new ReadOnly(dir, true);
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-x------"));
            return new ReadOnly(dir, false);
        }

        String how() {
            return mounted ? "a read-only bind mount" : "mode 0500";
        }

        void undo() throws Exception {
            if (mounted) {
                run("umount", dir.toString());
            } else {
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            }
        }

        private static int run(String... command) throws Exception {
            Process process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor();
        }
    }
}
