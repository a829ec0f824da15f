package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Smoke tests of the real packaged jar, run as an operator runs it. The unit tests' classpath holds every test and
 * Maven dependency, so it hides a dependency the shaded jar lacks, a service file it failed to merge, or a log
 * configuration that differs; these tests do not.
 */
class PackagedJarIT {

    static final String DOCUMENTED_RELAY_LINE = "relay           2 upstream(s) in order, http://mcpd.eu.internal:4317, "
            + "http://mcpd.us.internal:4317; each sender's key passed on; spool at /data/mcpd.spool/relay, 1024 MiB";

    @TempDir
    Path tmp;


    @Test
    void theJarStartsAndAnswersIngestAndOtlpRequestsAsSpecified() throws Exception {
        int port = PackagedJar.freePort();
        try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), "relay", "--listen", "127.0.0.1:" + port,
                "--data", tmp.resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:9")) {
            HttpResponse<String> ingest = HTTP.send(post(relay, "/v1/ingest", "application/json",
                    "{\"events\":[{\"name\":\"smoke\"}]}".getBytes(StandardCharsets.UTF_8)),
                    HttpResponse.BodyHandlers.ofString());
            assertAll("POST /v1/ingest",
                    () -> assertEquals(202, ingest.statusCode(), ingest.body()),
                    () -> assertEquals("spooled", ingest.headers().firstValue("mcpd-relay").orElse(null)),
                    () -> assertEquals("{\"accepted\":0,\"duplicate\":0,\"rejected\":0}", ingest.body()));

            HttpResponse<byte[]> traces = HTTP.send(post(relay, "/v1/traces", "application/x-protobuf",
                    new byte[] {0x0a, 0x00}), HttpResponse.BodyHandlers.ofByteArray());
            assertAll("POST /v1/traces (protobuf)",
                    () -> assertEquals(200, traces.statusCode(), new String(traces.body(), StandardCharsets.UTF_8)),
                    () -> assertEquals("application/x-protobuf",
                            traces.headers().firstValue("Content-Type").orElse(null)),
                    () -> assertArrayEquals(new byte[0], traces.body(), "an empty ExportTraceServiceResponse"));

            assertTrue(Files.isDirectory(tmp.resolve("mcpd.spool").resolve("relay")),
                    "the relay spools in <dir of --data>/<stem>.spool/relay");
        }
    }

    @Test
    void aCleanStartAndStopBySigtermLogNoStackTrace() throws Exception {
        int port = PackagedJar.freePort();
        try (PackagedJar relay = PackagedJar.start(tmp, port, Map.of(), "relay", "--listen", "127.0.0.1:" + port,
                "--data", tmp.resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:9")) {
            HttpResponse<String> ingest = HTTP.send(post(relay, "/v1/ingest", "application/json",
                    "{\"events\":[]}".getBytes(StandardCharsets.UTF_8)), HttpResponse.BodyHandlers.ofString());
            assertEquals(202, ingest.statusCode(), ingest.body());
            relay.terminate();
            String log = Files.readString(relay.log(), StandardCharsets.UTF_8);
            assertFalse(log.contains("\tat ") || log.contains("Exception in thread"),
                    "a clean start, a request and SIGTERM log no stack trace:\n" + relay.logTail(60));
        }
    }

    @Test
    void configPrintsTheRelayLineOfTheSpec() {
        PackagedJar.Result result = PackagedJar.runJar(tmp,
                Map.of("MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317"),
                "--data", "/data/mcpd.db", "config");
        assertEquals(0, result.status(), result::toString);
        List<String> relayLines = result.outLines().stream().filter(line -> line.startsWith("relay")).toList();
        assertEquals(List.of(DOCUMENTED_RELAY_LINE), relayLines, result::toString);
        assertEquals("", result.err(), "config prints nothing on stderr");
    }

    @Test
    void aBadOptionValueIsOneLineOnStderrAndExitStatus2() {
        PackagedJar.Result result = PackagedJar.runJar(tmp, Map.of(),
                "relay", "--spool-max-bytes", "-5", "--upstream", "http://x");
        assertOneLineUsageError(result);
        assertTrue(result.err().contains("--spool-max-bytes"), "names the option: " + result.err());
    }

    @Test
    void aRelayWithoutUpstreamRefusesToStartAndSaysHowToNameOne() {
        PackagedJar.Result result = PackagedJar.runJar(tmp, Map.of(), "relay");
        assertOneLineUsageError(result);
        assertTrue(result.err().contains("--upstream") && result.err().contains("MCPD_UPSTREAMS"),
                "names both --upstream and MCPD_UPSTREAMS: " + result.err());
    }

    @Test
    void aPortAlreadyInUseIsAOneLineErrorAndANonZeroExitWithoutStackTrace() throws IOException {
        try (ServerSocket occupied = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            int port = occupied.getLocalPort();
            PackagedJar.Result result = PackagedJar.runJar(tmp, Map.of(), "relay", "--listen", "127.0.0.1:" + port,
                    "--data", tmp.resolve("mcpd.db").toString(), "--upstream", "http://127.0.0.1:9");
            assertNotEquals(0, result.status(), result::toString);
            assertNoStackTrace(result);
            List<String> errorLines = result.errLines().stream().filter(line -> line.startsWith("mcpd: ")).toList();
            assertEquals(1, errorLines.size(), "one 'mcpd: …' error line: " + result);
            assertTrue(errorLines.get(0).contains(String.valueOf(port)), "the error names the address: " + result);
        }
    }

    @Test
    void theLauncherScriptTellsTheUserToBuildWhenTheJarIsMissing() {
        Path launcher = projectDir().resolve("bin").resolve("mcpd");
        assertTrue(Files.isExecutable(launcher), launcher + " is an executable launcher");
        Path missing = tmp.resolve("no-such-dir").resolve("mcpd.jar");
        PackagedJar.Result result = PackagedJar.run(tmp, Map.of("MCPD_JAR", missing.toString()),
                List.of(launcher.toString(), "config"));
        assertNotEquals(0, result.status(), result::toString);
        assertEquals("", result.out(), result::toString);
        assertEquals(1, result.errLines().size(), "one line on stderr: " + result);
        String line = result.errLines().get(0);
        assertTrue(line.contains(missing.toString()), "names the jar it looked for: " + line);
        assertTrue(line.toLowerCase().contains("build"), "tells the user to build first: " + line);
    }

    @Test
    void theLauncherUsesTheClassDataArchiveOfItsJarAndIgnoresABrokenOne() throws Exception {
        Path jar = Files.copy(PackagedJar.jar(), tmp.resolve("mcpd.jar"));
        Path bin = projectDir().resolve("bin");
        Map<String, String> upstream = Map.of("MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317");
        List<String> expected = PackagedJar.runJar(tmp, upstream, "config").outLines();

        PackagedJar.Result written = PackagedJar.run(tmp, Map.of("MCPD_JAR", jar.toString()),
                List.of(bin.resolve("cds-archive").toString()), Duration.ofSeconds(120));
        assertEquals(0, written.status(), written::toString);
        assertTrue(Files.size(tmp.resolve("mcpd.jsa")) > 0, "the archive is written beside the jar");
        // -Xshare:on makes the JVM refuse to start unless it maps the archive: the launcher must have passed it.
        Map<String, String> launch = new HashMap<>(upstream);
        launch.put("MCPD_JAR", jar.toString());
        launch.put("MCPD_JAVA_OPTS", "-Xshare:on");
        PackagedJar.Result withArchive = PackagedJar.run(tmp, launch, List.of(bin.resolve("mcpd").toString(), "config"));
        assertEquals(0, withArchive.status(), withArchive::toString);
        assertEquals(expected, withArchive.outLines(), "config's output is the same with the archive");

        Files.writeString(tmp.resolve("mcpd.jsa"), "not an archive");
        launch.remove("MCPD_JAVA_OPTS");
        PackagedJar.Result broken = PackagedJar.run(tmp, launch, List.of(bin.resolve("mcpd").toString(), "config"));
        assertEquals(0, broken.status(), broken::toString);
        assertEquals(expected, broken.outLines(), "a broken archive is not used and says nothing on stdout");
        assertEquals("", broken.err(), broken::toString);
    }

    @Test
    void theLauncherSizesTheHeapForTheMemoryLimitNotTheHost() throws Exception {
        Path launcher = projectDir().resolve("bin").resolve("mcpd");
        Path cgroup = Files.createDirectories(tmp.resolve("cgroup"));
        long machine = Math.min(512L << 20, Math.max(64L << 20, machineBytes() / 4 >> 20 << 20));
        assertEquals(machine, maxHeap(launcher, cgroup, null), "no cgroup file: a quarter of the machine, at most 512 MiB");
        Files.writeString(cgroup.resolve("memory.max"), "max\n");
        assertEquals(machine, maxHeap(launcher, cgroup, null), "a cgroup without a limit: the same");
        Files.writeString(cgroup.resolve("memory.max"), Long.toString(1L << 30) + "\n");
        assertEquals(256L << 20, maxHeap(launcher, cgroup, null), "a 1 GiB container: a quarter of it");
        Files.writeString(cgroup.resolve("memory.max"), Long.toString(128L << 20) + "\n");
        assertEquals(64L << 20, maxHeap(launcher, cgroup, null), "never below 64 MiB");
        assertEquals(768L << 20, maxHeap(launcher, cgroup, "768m"), "MCPD_HEAP wins");
        long own = maxHeapWith(launcher, cgroup, "-XX:MaxRAMPercentage=70");
        assertTrue(own > (512L << 20) || machineBytes() < (1L << 30),
                "an operator's own heap option replaces the launcher's sizing (70 % of the machine): " + own);
    }

    private long maxHeapWith(Path launcher, Path cgroup, String javaOptions) {
        PackagedJar.Result result = PackagedJar.run(tmp, Map.of("MCPD_CGROUP_ROOT", cgroup.toString(),
                "MCPD_JAVA_OPTS", javaOptions + " -XX:+PrintFlagsFinal"), List.of(launcher.toString(), "--help"));
        return result.outLines().stream().filter(line -> line.contains(" MaxHeapSize ")).findFirst()
                .map(line -> Long.parseLong(line.split("=")[1].trim().split("\\s+")[0]))
                .orElseThrow(() -> new AssertionError("no MaxHeapSize in " + result));
    }

    /** The JVM's MaxHeapSize when the launcher reads cgroup files from {@code cgroup} (and MCPD_HEAP is {@code heap}). */
    private long maxHeap(Path launcher, Path cgroup, String heap) {
        Map<String, String> environment = new HashMap<>(Map.of("MCPD_CGROUP_ROOT", cgroup.toString(),
                "MCPD_JAVA_OPTS", "-XX:+PrintFlagsFinal"));
        if (heap != null) {
            environment.put("MCPD_HEAP", heap);
        }
        PackagedJar.Result result = PackagedJar.run(tmp, environment, List.of(launcher.toString(), "--help"));
        return result.outLines().stream().filter(line -> line.contains(" MaxHeapSize ")).findFirst()
                .map(line -> Long.parseLong(line.split("=")[1].trim().split("\\s+")[0]))
                .orElseThrow(() -> new AssertionError("no MaxHeapSize in " + result));
    }

    private static long machineBytes() throws IOException {
        return Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(line -> line.startsWith("MemTotal:"))
                .map(line -> Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024).findFirst().orElseThrow();
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private static HttpRequest post(PackagedJar relay, String target, String contentType, byte[] body) {
        return HttpRequest.newBuilder(relay.uri(target)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    }

    /** Exit status 2, nothing on stdout, one line on stderr, no stack trace. */
    private static void assertOneLineUsageError(PackagedJar.Result result) {
        assertEquals(2, result.status(), result::toString);
        assertEquals("", result.out(), result::toString);
        assertEquals(1, result.errLines().size(), "exactly one line on stderr: " + result);
        assertTrue(result.err().startsWith("mcpd: "), result::toString);
        assertNoStackTrace(result);
    }

    private static void assertNoStackTrace(PackagedJar.Result result) {
        String printed = result.out() + result.err();
        assertFalse(printed.contains("Exception") || printed.contains("\tat "), "no stack trace: " + result);
    }

    private static Path projectDir() {
        return Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    }
}
