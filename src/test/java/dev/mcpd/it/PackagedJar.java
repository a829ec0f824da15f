package dev.mcpd.it;

import static org.junit.jupiter.api.Assertions.fail;

import dev.mcpd.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The packaged application ({@code target/mcpd.jar}, named by the system property {@code mcpd.jar} that failsafe
 * sets) run as a separate process, the way an operator runs it.
 *
 * <p>A long-running process ({@link #start}) writes stdout and stderr to a log file in the test's folder and is
 * handed back only once its routes serve ({@code GET /readyz} answers, not "starting"). A short command ({@link #runJar}, {@link #run}) runs to
 * completion and its exit status, stdout and stderr are returned. The child's environment is this JVM's minus every
 * {@code MCPD_*} variable and the JVM option variables (which would make the JVM print to stderr), plus what the test
 * names. Every process still running when the test JVM exits is killed.
 */
public final class PackagedJar implements AutoCloseable {

    /** How long a relay may take to serve. */
    public static final Duration START_DEADLINE = Duration.ofSeconds(60);
    /** How long a short command may take, and a terminated process may take to exit. */
    public static final Duration EXIT_DEADLINE = Duration.ofSeconds(30);
    /** The exit status Java reports for a process killed by SIGKILL (128 + 9). */
    public static final int KILLED_BY_SIGKILL = 128 + 9;

    private static final AtomicInteger FILES = new AtomicInteger();
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();
    private static final List<String> INHERITED_JVM_OPTIONS = List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS",
            "_JAVA_OPTIONS");

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "kill-leftover-mcpd"));
    }

    private final Process process;
    private final Path log;
    private final int port;

    private PackagedJar(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /** What a command that ran to completion left behind. */
    public record Result(int status, String out, String err) {

        public List<String> errLines() {
            return err.lines().toList();
        }

        public List<String> outLines() {
            return out.lines().toList();
        }

        @Override
        public String toString() {
            return "exit status " + status + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
        }
    }

    // ---------------------------------------------------------------------------------------------- locating

    /** The packaged jar, from the system property {@code mcpd.jar}; fails the test clearly when it is not there. */
    public static Path jar() {
        String value = System.getProperty("mcpd.jar");
        if (value == null || value.isBlank()) {
            fail("system property mcpd.jar is not set: run this test with `mvn verify` (failsafe sets it to "
                    + "target/mcpd.jar) or pass -Dmcpd.jar=PATH");
        }
        Path jar = Path.of(value).toAbsolutePath();
        if (!Files.isRegularFile(jar)) {
            fail("mcpd.jar=" + jar + " does not exist: build it first with `mvn -DskipTests package`");
        }
        return jar;
    }

    /** The java launcher of the JVM running the tests. */
    public static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /** A loopback port nobody listens on right now. */
    public static int freePort() {
        return Ports.free();
    }

    // ---------------------------------------------------------------------------------------------- long-running

    /**
     * Starts {@code java -jar mcpd.jar args} in {@code dir} and waits until its routes serve on
     * {@code http://127.0.0.1:port} ({@code port} must be the one the arguments or environment make it listen on). Fails with the tail
     * of its log when it exits first or does not answer within {@link #START_DEADLINE}.
     */
    public static PackagedJar start(Path dir, int port, Map<String, String> environment, String... args) {
        return start(dir, port, environment, List.of(), args);
    }

    /** As {@link #start(Path, int, Map, String...)}, with JVM options ({@code -Xmx256m}) before {@code -jar}. */
    public static PackagedJar start(Path dir, int port, Map<String, String> environment, List<String> jvmOptions,
                                    String... args) {
        PackagedJar started = launch(dir, port, environment, jvmOptions, args);
        started.awaitHealthy();
        return started;
    }

    /** Starts {@code java [jvmOptions] -jar mcpd.jar args} and returns at once, without waiting for it to serve. */
    public static PackagedJar launch(Path dir, int port, Map<String, String> environment, List<String> jvmOptions,
                                     String... args) {
        return launchCommand(dir, dir, port, environment, javaJar(jvmOptions, args));
    }

    /**
     * Starts {@code command} (the launcher {@code bin/mcpd …}, say) in {@code workingDir}, its log in {@code dir},
     * and waits until its routes serve on {@code port}.
     */
    public static PackagedJar startCommand(Path dir, Path workingDir, int port, Map<String, String> environment,
                                           List<String> command) {
        PackagedJar started = launchCommand(dir, workingDir, port, environment, command);
        started.awaitHealthy();
        return started;
    }

    private static PackagedJar launchCommand(Path dir, Path workingDir, int port, Map<String, String> environment,
                                             List<String> command) {
        Path log = dir.resolve("mcpd-" + FILES.incrementAndGet() + ".log");
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(workingDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(devNull()));
        prepareEnvironment(builder, environment);
        return new PackagedJar(launch(builder), log, port);
    }

    /**
     * Until the routes serve: {@code /readyz} answers anything but "starting". ({@code /healthz} answers 200 from the
     * first connection the port accepts, a moment before the routes are up: liveness, not readiness to take requests.)
     */
    private void awaitHealthy() {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest readyz = HttpRequest.newBuilder(uri("/readyz")).timeout(Duration.ofSeconds(5)).GET().build();
        long deadline = System.nanoTime() + START_DEADLINE.toNanos();
        String lastAnswer = "no answer yet";
        while (true) {
            if (!process.isAlive()) {
                fail("mcpd exited with status " + process.exitValue() + " before its routes served; "
                        + "log " + log + " ends with:\n" + logTail(40));
            }
            try {
                HttpResponse<String> answer = client.send(readyz, HttpResponse.BodyHandlers.ofString());
                if (!answer.body().startsWith("starting")) {
                    return;
                }
                lastAnswer = "status " + answer.statusCode() + ": " + answer.body();
            } catch (IOException e) {
                lastAnswer = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for mcpd to start", e);
            }
            if (System.nanoTime() - deadline > 0) {
                close();
                fail("mcpd's routes did not serve within " + START_DEADLINE.toSeconds() + " s (GET /readyz, last: "
                        + lastAnswer + "); log " + log + " ends with:\n" + logTail(40));
            }
            pause(Duration.ofMillis(100));
        }
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public Path log() {
        return log;
    }

    /** {@code http://127.0.0.1:PORT} + {@code pathAndQuery}. */
    public URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + port + pathAndQuery);
    }

    /** The last {@code lines} lines of what the process printed. */
    public String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(log " + log + " unreadable: " + e + ")";
        }
    }

    /**
     * Kills the process with SIGKILL ({@link Process#destroyForcibly()} sends SIGKILL on Linux; the exit status
     * 128 + 9 that Java reports afterwards is checked, so a process that had exited by itself, or ended some other
     * way, fails the test). Returns once the process is gone.
     */
    public void kill9() {
        if (!process.isAlive()) {
            fail("mcpd was to be killed but had already exited with status " + process.exitValue() + "; log ends "
                    + "with:\n" + logTail(40));
        }
        process.destroyForcibly();
        int status = awaitExit(process, EXIT_DEADLINE);
        RUNNING.remove(process);
        if (status != KILLED_BY_SIGKILL) {
            fail("mcpd killed with SIGKILL should report exit status " + KILLED_BY_SIGKILL + ", got " + status
                    + "; log ends with:\n" + logTail(40));
        }
    }

    /** Sends SIGTERM and waits for the process to exit; returns its exit status. */
    public int terminate() {
        signalTerminate();
        return awaitExit();
    }

    /** Sends SIGTERM and returns at once. */
    public void signalTerminate() {
        process.destroy();
    }

    /** Waits (at most {@link #EXIT_DEADLINE}) for the process to exit; returns its exit status. */
    public int awaitExit() {
        return awaitExit(EXIT_DEADLINE);
    }

    /** Waits at most {@code deadline} for the process to exit; returns its exit status. */
    public int awaitExit(Duration deadline) {
        int status = awaitExit(process, deadline);
        RUNNING.remove(process);
        return status;
    }

    /** Kills the process if it still runs (for {@code finally} blocks and try-with-resources). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(EXIT_DEADLINE.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        RUNNING.remove(process);
    }

    // ---------------------------------------------------------------------------------------------- short commands

    /** Runs {@code java -jar mcpd.jar args} in {@code dir} to completion (at most {@link #EXIT_DEADLINE}). */
    public static Result runJar(Path dir, Map<String, String> environment, String... args) {
        return run(dir, environment, javaJar(args));
    }

    /**
     * Runs {@code command} in {@code dir} to completion and returns its exit status, stdout and stderr. A command
     * still running after {@link #EXIT_DEADLINE} is killed and fails the test with what it printed.
     */
    public static Result run(Path dir, Map<String, String> environment, List<String> command) {
        return run(dir, environment, command, EXIT_DEADLINE);
    }

    /** {@link #run(Path, Map, List)} for a script that starts several JVMs one after another: its own deadline. */
    public static Result run(Path dir, Map<String, String> environment, List<String> command, Duration deadline) {
        int n = FILES.incrementAndGet();
        Path out = dir.resolve("run-" + n + ".out");
        Path err = dir.resolve("run-" + n + ".err");
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(devNull()));
        prepareEnvironment(builder, environment);
        Process process = launch(builder);
        boolean exited;
        try {
            exited = process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while waiting for " + command, e);
        }
        if (!exited) {
            process.destroyForcibly();
            awaitExit(process, EXIT_DEADLINE);
            RUNNING.remove(process);
            fail(String.join(" ", command) + " did not exit within " + deadline.toSeconds() + " s (killed); "
                    + "it printed:\n--- stdout ---\n" + read(out) + "--- stderr ---\n" + read(err));
        }
        RUNNING.remove(process);
        return new Result(process.exitValue(), read(out), read(err));
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private static List<String> javaJar(String... args) {
        return javaJar(List.of(), args);
    }

    private static List<String> javaJar(List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>();
        command.add(java().toString());
        command.addAll(startingOptions());
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(jar().toString());
        command.addAll(Arrays.asList(args));
        return command;
    }

    /**
     * What every {@code java -jar mcpd.jar} the tests start is given so that starting costs this 2-core machine less
     * CPU — the packaged-jar tests start a JVM for every relay, collector and short command, two test classes at a
     * time: the serial collector bin/mcpd runs with, C1 only (a process that lives for seconds gains nothing from
     * C2's compilations), and the jar's class-data archive, written once by bin/cds-archive. A relay then serves
     * after 0.9 s of CPU instead of 4.2. They change how fast the JVM starts, not what mcpd does; the launcher's own
     * tests (PackagedJarIT, QuickstartIT) run bin/mcpd as operators do.
     */
    private static synchronized List<String> startingOptions() {
        if (startingOptions == null) {
            List<String> options = new ArrayList<>(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
            classDataArchive().ifPresent(archive -> options.addAll(List.of("-XX:SharedArchiveFile=" + archive,
                    "-Xlog:cds=off", "-Xlog:cds+dynamic=off")));
            startingOptions = List.copyOf(options);
        }
        return startingOptions;
    }

    private static List<String> startingOptions;

    /** The jar's archive beside it, written now unless one newer than the jar is there; empty where it cannot be. */
    private static Optional<Path> classDataArchive() {
        Path jar = jar();
        Path archive = jar.resolveSibling(jar.getFileName().toString().replaceAll("\\.jar$", "") + ".jsa");
        try {
            if (Files.isRegularFile(archive)
                    && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0) {
                return Optional.of(archive);
            }
            Path script = Path.of(System.getProperty("basedir", System.getProperty("user.dir")), "bin", "cds-archive");
            Result written = run(jar.getParent(), Map.of("MCPD_JAR", jar.toString()), List.of(script.toString()),
                    Duration.ofSeconds(120));
            if (written.status() == 0 && Files.isRegularFile(archive)) {
                return Optional.of(archive);
            }
            System.err.println("PackagedJar: no class-data archive, the JVMs start without one: " + written);
        } catch (IOException e) {
            System.err.println("PackagedJar: no class-data archive, the JVMs start without one: " + e);
        }
        return Optional.empty();
    }

    private static void prepareEnvironment(ProcessBuilder builder, Map<String, String> environment) {
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("MCPD_") || INHERITED_JVM_OPTIONS.contains(name));
        env.putAll(environment);
    }

    private static Process launch(ProcessBuilder builder) {
        try {
            Process process = builder.start();
            RUNNING.add(process);
            return process;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + builder.command(), e);
        }
    }

    private static int awaitExit(Process process, Duration deadline) {
        try {
            if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS);
                fail("process " + process.pid() + " did not exit within " + deadline.toSeconds() + " s");
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for process " + process.pid(), e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static File devNull() {
        return new File("/dev/null");
    }

    private static void pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
