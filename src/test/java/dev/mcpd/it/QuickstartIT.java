package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PROCESS_PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpd.testing.DocExample;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/quickstart} as the README runs it: a collector and a relay on loopback, each log line marked with its
 * role, both stopped by a TERM to the script, and both stopped — with a word — when one of them dies.
 */
class QuickstartIT {

    private static final Pattern PIDS = Pattern.compile("collector pid (\\d+) .* relay pid (\\d+) ");

    @TempDir
    Path work;

    @BeforeEach
    void thePortsItUsesAreFree() {
        for (int port : new int[] {4317, 4318}) {
            try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                probe.getLocalPort();
            } catch (IOException e) {
                assumeTrue(false, "bin/quickstart listens on 4317 and 4318, and port " + port + " is taken here");
            }
        }
    }

    private Process start() throws IOException {
        return new ProcessBuilder(Path.of("bin/quickstart").toAbsolutePath().toString()).directory(work.toFile())
                .redirectErrorStream(true).redirectOutput(work.resolve("out.log").toFile()).start();
    }

    private List<String> lines() throws IOException {
        return Files.readAllLines(work.resolve("out.log"));
    }

    private static boolean relayReady() {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:4317/readyz")).build(),
                    HttpResponse.BodyHandlers.ofString()).body().equals("ok\n");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Test
    void aTermStopsBothAndEveryLogLineSaysWhichRoleWroteIt() throws Exception {
        Process quickstart = start();
        try {
            await().atMost(PROCESS_PATIENCE).until(QuickstartIT::relayReady);
            // The relay says where it listens once it has started: loopback only.
            await().atMost(PROCESS_PATIENCE).alias("the relay's start line").until(() -> lines().stream()
                    .anyMatch(l -> l.startsWith("relay | ") && l.contains("relay listening on 127.0.0.1:4317")));
            await().atMost(PROCESS_PATIENCE).alias("the collector's start line").until(() -> lines().stream()
                    .anyMatch(l -> l.startsWith("serve | ") && l.contains("collector listening on 127.0.0.1:4318")));
            quickstart.destroy(); // SIGTERM, as a supervisor or a CI step stops it
            assertTrue(quickstart.waitFor(PackagedJar.EXIT_DEADLINE.toSeconds(), TimeUnit.SECONDS),
                    "a TERM stops the script: " + lines());
            assertEquals(143, quickstart.exitValue());
            for (String line : lines()) {
                assertTrue(line.startsWith("serve | ") || line.startsWith("relay | ")
                        || line.startsWith("quickstart: "), "every line says who wrote it: " + line);
            }
            long[] pids = pids(lines().get(0));
            for (long pid : pids) {
                assertTrue(ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), "process " + pid + " stopped");
            }
        } finally {
            stopAll(quickstart);
        }
    }

    @Test
    void whenTheCollectorDiesTheScriptSaysSoAndStopsTheRelay() throws Exception {
        Process quickstart = start();
        try {
            await().atMost(PROCESS_PATIENCE).until(QuickstartIT::relayReady);
            long[] pids = pids(lines().get(0));
            ProcessHandle.of(pids[0]).orElseThrow().destroyForcibly();
            assertTrue(quickstart.waitFor(PackagedJar.EXIT_DEADLINE.toSeconds(), TimeUnit.SECONDS), lines().toString());
            assertEquals(1, quickstart.exitValue());
            assertTrue(lines().contains("quickstart: the collector stopped (exit 137); stopping the relay"),
                    lines().toString());
            assertTrue(ProcessHandle.of(pids[1]).map(p -> !p.isAlive()).orElse(true), "the relay stopped too");
        } finally {
            stopAll(quickstart);
        }
    }

    /**
     * The README's requests, run with curl as written, one line after the other; each answers what the line below it
     * says ({@code # → …}). A read of the collector may be repeated until it does, since delivery follows the 2xx.
     */
    @Test
    void theReadmesRequestsAnswerWhatTheReadmeSays() throws Exception {
        assumeTrue(commandRuns("curl", "--version"), "curl runs the README's requests (.ci/run installs it)");
        Process quickstart = start();
        try {
            await().atMost(PROCESS_PATIENCE).until(QuickstartIT::relayReady);
            for (String example : List.of("quickstart-first-request", "quickstart-same-body")) {
                List<String> lines = DocExample.block(Path.of("README.md"), example).strip().lines().toList();
                for (int i = 0; i < lines.size(); i++) {
                    String command = lines.get(i);
                    if (command.startsWith("#")) {
                        continue;
                    }
                    assertTrue(i + 1 < lines.size() && lines.get(i + 1).startsWith("# → "),
                            "the README says what " + command + " answers");
                    String expected = lines.get(i + 1).substring("# → ".length());
                    if (command.contains(" -d ")) {
                        assertEquals(expected, sh(command), example + ": " + command);
                    } else {
                        await().atMost(PROCESS_PATIENCE).alias(example + ": " + command).until(() -> sh(command),
                                expected::equals);
                    }
                }
            }
        } finally {
            stopAll(quickstart);
        }
    }

    private String sh(String command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("sh", "-c", command).directory(work.toFile())
                .redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), command + ": " + out);
        return out.strip();
    }

    private static boolean commandRuns(String... command) {
        try {
            return new ProcessBuilder(command).redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Kills the script and its processes, and waits until they are gone: the next test needs their ports. */
    private static void stopAll(Process quickstart) throws Exception {
        List<ProcessHandle> all = new ArrayList<>(quickstart.descendants().toList());
        all.add(quickstart.toHandle());
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle process : all) {
            process.onExit().get(PackagedJar.EXIT_DEADLINE.toSeconds(), TimeUnit.SECONDS);
        }
    }

    private static long[] pids(String firstLine) {
        Matcher matcher = PIDS.matcher(firstLine);
        assertTrue(matcher.find(), "the script names its processes first: " + firstLine);
        return new long[] {Long.parseLong(matcher.group(1)), Long.parseLong(matcher.group(2))};
    }
}
