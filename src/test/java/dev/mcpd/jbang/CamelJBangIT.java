package dev.mcpd.jbang;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import dev.mcpd.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay's YAML routes run by Camel JBang ({@code camel run}, through {@code jbang/run.sh}, docs/jbang.md) as a
 * separate process: it answers {@code /healthz}, takes {@code POST /v1/ingest} with 202 once spooled, delivers it to
 * an upstream, and stops on SIGTERM.
 *
 * <p>Camel JBang downloads what it needs from Maven Central when it starts (the first run about 10–30 s, kept in
 * {@code target/jbang-it/} for the next ones), and {@code run.sh} builds the Camel CLI of {@code jbang/pom.xml} with
 * Maven if it is not built yet. The test is skipped, with the reason, only when that environment is missing: no
 * {@code bash}, no {@code mvn} to build the CLI, Maven Central unreachable, a download failing in transfer, or a start
 * still downloading after {@link #START_DEADLINE}. Anything else that keeps the relay from answering fails it.
 */
class CamelJBangIT {

    /** First run: build the CLI (~15 s), download Camel JBang's runtime pieces (~10–30 s), compile, start. */
    static final Duration START_DEADLINE = Duration.ofMinutes(3);
    static final Duration STOP_DEADLINE = Duration.ofSeconds(30);
    static final String CENTRAL_PROBE =
            "https://repo1.maven.org/maven2/org/apache/camel/camel-jbang-core/4.17.0/camel-jbang-core-4.17.0.pom";
    /** Log text that means a download failed in transfer (network), not that something is missing or wrong. */
    static final List<String> TRANSFER_FAILURES = List.of("Could not transfer", "UnknownHostException",
            "Network is unreachable", "No route to host", "connect timed out");
    /** Log text of work that depends on Maven Central's speed: building the CLI, downloading. */
    static final List<String> DOWNLOADING = List.of("building the Camel CLI", "Download", "Resolv");

    private final Path project = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();

    @TempDir
    Path tmp;

    @Test
    void theRelayRoutesRunUnderCamelJBangAnswerIngestWith202SpoolDeliverAndStop() throws Exception {
        Path script = project.resolve("jbang/run.sh");
        Path jar = project.resolve("target/original-mcpd.jar");
        assertTrue(Files.isRegularFile(script), script + " is missing");
        assertTrue(Files.isRegularFile(jar), jar + " is missing: `mvn package` builds it before the ITs run");
        assumeTrue(onPath("bash"), "no bash on PATH to run jbang/run.sh");
        assumeTrue(Files.isRegularFile(project.resolve("jbang/target/classpath.txt")) || onPath("mvn"),
                "the Camel CLI (jbang/pom.xml) is not built and there is no mvn on PATH to build it");
        centralReachableOrSkip();

        LinkedBlockingQueue<Received> upstream = new LinkedBlockingQueue<>();
        HttpServer collector = upstream(upstream);
        int port = Ports.free();
        Path work = project.resolve("target/jbang-it");
        Files.createDirectories(work);
        Path log = work.resolve("relay-" + port + ".log");
        // Started from another folder, with a relative spool directory: it means that folder, as for mcpd itself.
        ProcessBuilder command = new ProcessBuilder("bash", script.toString(), "relay")
                .directory(tmp.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        Map<String, String> env = command.environment();
        env.keySet().removeIf(name -> name.startsWith("MCPD_") || name.endsWith("JAVA_OPTIONS")
                || name.equals("JAVA_TOOL_OPTIONS"));
        env.put("MCPD_LISTEN", "127.0.0.1:" + port);
        env.put("MCPD_UPSTREAMS", "http://127.0.0.1:" + collector.getAddress().getPort());
        env.put("MCPD_SPOOL_DIR", "spool");
        env.put("MCPD_JAR", jar.toString());
        env.put("MCPD_JBANG_WORK", work.toString());
        env.put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());

        Process relay = command.start();
        try {
            awaitHealthy(relay, port, log);

            HttpResponse<String> healthz = HTTP.send(HttpRequest.newBuilder(uri(port, "/healthz"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertAll("GET /healthz",
                    () -> assertEquals(200, healthz.statusCode()),
                    () -> assertEquals("ok\n", healthz.body()));

            byte[] body = "{\"events\":[{\"msg\":\"hello from camel run\"}]}".getBytes(StandardCharsets.UTF_8);
            HttpResponse<String> ingest = HTTP.send(HttpRequest.newBuilder(uri(port, "/v1/ingest"))
                    .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                    .header("Idempotency-Key", "jbang-it-1")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertAll("POST /v1/ingest",
                    () -> assertEquals(202, ingest.statusCode(), ingest.body()),
                    () -> assertEquals("spooled", ingest.headers().firstValue("mcpd-relay").orElse(null)),
                    () -> assertEquals("{\"accepted\":0,\"duplicate\":0,\"rejected\":0}", ingest.body()));

            HttpResponse<String> status = HTTP.send(HttpRequest.newBuilder(uri(port, "/relay/status"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(status.body().contains("\"directory\" : \"" + tmp.resolve("spool").resolve("relay") + "\""),
                    "a relative MCPD_SPOOL_DIR is the caller's folder's:\n" + status.body());
            assertTrue(Files.isDirectory(tmp.resolve("spool").resolve("relay")), "the spool is where it says");

            HttpResponse<String> metrics = HTTP.send(HttpRequest.newBuilder(uri(port, "/metrics"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(metrics.body().lines().anyMatch(l -> l.equals("mcpd_relay_accepted_total 1.0")),
                    "the request was written to the spool:\n" + metrics.body());

            Received delivered = upstream.poll(30, TimeUnit.SECONDS);
            assertNotNull(delivered, "nothing reached the upstream within 30 s\n" + tail(log));
            assertAll("delivered from the spool to the upstream",
                    () -> assertEquals("/v1/ingest", delivered.path()),
                    () -> assertEquals("jbang-it-1", delivered.idempotencyKey()),
                    () -> assertArrayEquals(body, delivered.body()));

            HttpResponse<String> get = HTTP.send(HttpRequest.newBuilder(uri(port, "/v1/ingest"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertAll("GET /v1/ingest",
                    () -> assertEquals(405, get.statusCode()),
                    () -> assertEquals("POST", get.headers().firstValue("Allow").orElse(null)));

            relay.destroy(); // SIGTERM: run.sh execs java, so this is the JVM running `camel run`
            assertTrue(relay.waitFor(STOP_DEADLINE.toSeconds(), TimeUnit.SECONDS),
                    "the relay did not stop within " + STOP_DEADLINE + " of SIGTERM\n" + tail(log));
            assertTrue(Files.readString(log).contains("is shutdown"), "no clean shutdown\n" + tail(log));
        } finally {
            relay.destroyForcibly();
            relay.waitFor(10, TimeUnit.SECONDS);
            collector.stop(0);
        }
    }

    /** Waits for {@code /healthz}; skips for a slow or unreachable Maven Central, fails for anything else. */
    private void awaitHealthy(Process relay, int port, Path log) throws Exception {
        Instant deadline = Instant.now().plus(START_DEADLINE);
        while (Instant.now().isBefore(deadline)) {
            if (!relay.isAlive()) {
                String text = Files.readString(log);
                for (String failure : TRANSFER_FAILURES) {
                    if (text.contains(failure)) {
                        abort("Camel JBang could not download from Maven Central (\"" + failure + "\"): "
                                + firstLineWith(text, failure));
                    }
                }
                fail("jbang/run.sh exited with status " + relay.exitValue() + " before answering\n" + tail(log));
            }
            try {
                HttpResponse<Void> healthz = HTTP.send(HttpRequest.newBuilder(uri(port, "/healthz"))
                        .timeout(Duration.ofSeconds(2)).GET().build(), HttpResponse.BodyHandlers.discarding());
                if (healthz.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(500);
        }
        relay.destroyForcibly();
        String text = Files.readString(log);
        String last = text.lines().filter(l -> !l.isBlank()).reduce((a, b) -> b).orElse("");
        if (!text.contains("(mcpd) started") && DOWNLOADING.stream().anyMatch(last::contains)) {
            abort("Camel JBang was still building or downloading after " + START_DEADLINE
                    + " (Maven Central slow?): " + last.strip());
        }
        fail("the relay did not answer /healthz within " + START_DEADLINE + "\n" + tail(log));
    }

    private static void centralReachableOrSkip() {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NORMAL).build();
        try {
            HttpResponse<Void> answer = http.send(HttpRequest.newBuilder(URI.create(CENTRAL_PROBE))
                    .timeout(Duration.ofSeconds(15)).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.discarding());
            assumeTrue(answer.statusCode() == 200,
                    "Maven Central answered " + answer.statusCode() + " for " + CENTRAL_PROBE);
        } catch (IOException e) {
            abort("Maven Central is not reachable (" + e + "): Camel JBang downloads its runtime from it");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abort("interrupted while checking Maven Central");
        }
    }

    record Received(String path, String idempotencyKey, byte[] body) {
    }

    /** An upstream collector that takes every POST (200) and answers its readiness probe. */
    private static HttpServer upstream(LinkedBlockingQueue<Received> received) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            if (exchange.getRequestMethod().equals("POST")) {
                received.add(new Received(exchange.getRequestURI().getPath(),
                        exchange.getRequestHeaders().getFirst("Idempotency-Key"), body));
            }
            byte[] answer = "{}".getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
        return server;
    }

    private static URI uri(int port, String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    private static String firstLineWith(String text, String needle) {
        return text.lines().filter(l -> l.contains(needle)).findFirst().orElse("").strip();
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        return "--- last lines of " + log + " ---\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
}
