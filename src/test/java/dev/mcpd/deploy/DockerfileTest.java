package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Options;
import dev.mcpd.deploy.DeployFiles.Instruction;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.testing.Ports;
import dev.mcpd.testing.TestCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/docker/Dockerfile (issue 8), read without a Docker engine: its stages, user, port, volume, health
 * check, environment and entrypoint, the files it copies, and the health check script run against a real relay.
 */
class DockerfileTest {

    static final String DOCKERFILE = "deploy/docker/Dockerfile";
    static final String HEALTHCHECK = "deploy/docker/healthcheck";

    @TempDir
    Path dir;

    private static List<Instruction> instructions() {
        return DeployFiles.dockerfile(DOCKERFILE);
    }

    private static List<Instruction> all(String keyword) {
        return instructions().stream().filter(i -> i.keyword().equals(keyword)).toList();
    }

    /** The instructions of the last stage: the runtime image. */
    private static List<Instruction> runtimeStage() {
        List<Instruction> instructions = instructions();
        int lastFrom = 0;
        for (int i = 0; i < instructions.size(); i++) {
            if (instructions.get(i).keyword().equals("FROM")) {
                lastFrom = i;
            }
        }
        return instructions.subList(lastFrom, instructions.size());
    }

    private static String only(List<Instruction> stage, String keyword) {
        List<String> found = stage.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments)
                .toList();
        assertEquals(1, found.size(), "one " + keyword + " in the runtime stage: " + found);
        return found.get(0);
    }

    @Test
    void theImageIsBuiltInTwoStagesMavenThenTheJre() {
        List<String> froms = all("FROM").stream().map(Instruction::arguments).toList();
        assertEquals(2, froms.size(), "two FROM stages: " + froms);
        Matcher build = Pattern.compile("maven:3\\.9-eclipse-temurin-17\\s+AS\\s+(\\S+)", Pattern.CASE_INSENSITIVE)
                .matcher(froms.get(0));
        assertTrue(build.matches(), "stage 1 is Maven 3.9 on Temurin 17, named: " + froms.get(0));
        assertEquals("eclipse-temurin:17-jre", froms.get(1).split("\\s+")[0], "stage 2 is the Temurin 17 JRE");
        assertTrue(all("RUN").stream().anyMatch(r -> r.arguments().equals("mvn -B -q -DskipTests package")),
                "stage 1 builds with mvn -B -q -DskipTests package");
        assertTrue(runtimeStage().stream().anyMatch(i -> i.keyword().equals("COPY")
                        && i.arguments().startsWith("--from=" + build.group(1) + " /src/target/mcpd.jar ")),
                "the runtime copies the jar from the build stage");
    }

    @Test
    void theRuntimeRunsAsTheNonRootUser10001() {
        String user = only(runtimeStage(), "USER");
        String uid = user.split(":")[0];
        assertEquals("10001", uid, "USER is uid 10001: " + user);
        assertFalse(Set.of("0", "root").contains(uid));
        assertTrue(runtimeStage().stream().anyMatch(i -> i.keyword().equals("RUN")
                && i.arguments().contains("useradd --uid 10001")), "the user exists in the image (useradd --uid 10001)");
        assertTrue(runtimeStage().stream().anyMatch(i -> i.keyword().equals("RUN")
                && i.arguments().contains("chown 10001:10001 /data")), "/data belongs to that user");
    }

    @Test
    void itExposesPort4317AndKeepsItsStateInTheDataVolume() {
        assertEquals("4317", only(runtimeStage(), "EXPOSE"));
        assertEquals(Options.LISTEN.defaultValue().orElseThrow().port(), 4317, "the port mcpd listens on by default");
        assertEquals("/data", only(runtimeStage(), "VOLUME"));
    }

    @Test
    void theHealthCheckAsksHealthzWithTheScriptTheImageShips() {
        String healthcheck = only(runtimeStage(), "HEALTHCHECK");
        assertTrue(healthcheck.matches(".*\\bCMD\\s+\\[\"/opt/mcpd/bin/healthcheck\",\\s*\"/healthz\"].*"),
                "HEALTHCHECK runs the script on /healthz: " + healthcheck);
        assertTrue(runtimeStage().stream().anyMatch(i -> i.keyword().equals("COPY")
                && i.arguments().equals(HEALTHCHECK + " /opt/mcpd/bin/healthcheck")), "the script is copied");
    }

    @Test
    void everyMcpdVariableTheImageSetsIsOneMcpdReads() {
        Map<String, String> environment = DeployFiles.dockerfileEnvironment(instructions());
        Set<String> set = environment.keySet().stream().filter(name -> name.startsWith("MCPD_"))
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> unknown = new TreeSet<>(set);
        unknown.removeAll(DeployFiles.knownVariables());
        assertEquals(Set.of(), unknown, "ENV sets only variables mcpd reads (" + DeployFiles.knownVariables() + ")");
        assertEquals("/data/mcpd.db", environment.get("MCPD_DATA"));
        assertEquals("/opt/mcpd/mcpd.jar", environment.get("MCPD_JAR"));
        assertTrue(runtimeStage().stream().anyMatch(i -> i.keyword().equals("COPY")
                && i.arguments().endsWith(" " + environment.get("MCPD_JAR"))), "MCPD_JAR names the copied jar");
    }

    @Test
    void theLauncherIsTheEntrypointAndTheRelayTheDefaultCommand() {
        assertEquals("[\"/opt/mcpd/bin/mcpd\"]", only(runtimeStage(), "ENTRYPOINT"));
        assertEquals("[\"relay\"]", only(runtimeStage(), "CMD"));
        assertTrue(runtimeStage().stream().anyMatch(i -> i.keyword().equals("COPY")
                && i.arguments().equals("bin/mcpd /opt/mcpd/bin/mcpd")), "bin/mcpd is copied to /opt/mcpd/bin");
    }

    @Test
    void everyFileTheImageCopiesIsInTheBuildContextAndNotIgnored() {
        List<String> ignored = DeployFiles.read(DOCKERFILE + ".dockerignore").lines().map(String::strip)
                .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
        for (Instruction copy : all("COPY")) {
            if (copy.arguments().startsWith("--from=")) {
                continue;
            }
            String[] parts = copy.arguments().split("\\s+");
            for (int i = 0; i < parts.length - 1; i++) {
                String source = parts[i].replaceAll("/$", "");
                assertTrue(Files.exists(DeployFiles.root().resolve(source)), source + " exists in the build context");
                assertFalse(ignored.contains(source) || ignored.contains(source.split("/")[0]),
                        source + " is not excluded by the .dockerignore");
            }
        }
    }

    @Test
    void theImageEnvironmentWithUpstreamsIsAcceptedByTheRealCli() {
        Map<String, String> environment = new HashMap<>(DeployFiles.dockerfileEnvironment(instructions()));
        environment.put("MCPD_UPSTREAMS", "http://collector:4317");
        DeployFiles.CliRun run = DeployFiles.mcpd(environment, "config");
        assertEquals(0, run.status(), run.err());
        assertTrue(run.section("relay").contains("spool at /data/mcpd.spool/relay"), run.out());
        assertTrue(run.section("store").startsWith("store           /data/mcpd.db"), run.out());
    }

    @Test
    void theHealthCheckScriptPassesOnAServingRelayAndFailsOtherwise() throws Exception {
        int port = Ports.free();
        McpdConfig config = McpdConfig.fromEnvironment(Map.of("MCPD_LISTEN", "127.0.0.1:" + port,
                "MCPD_DATA", dir.resolve("mcpd.db").toString(), "MCPD_UPSTREAMS", "http://127.0.0.1:9"));
        try (RelayApplication relay = RelayApplication.start(config)) {
            assertEquals(0, healthcheck("127.0.0.1:" + port, "/healthz"), "/healthz answers 200");
            assertEquals(0, healthcheck("0.0.0.0:" + port, "/healthz"), "a wildcard listener is asked on loopback");
            assertEquals(0, healthcheck("127.0.0.1:" + port), "/healthz is the default path");
            assertEquals(0, healthcheck("127.0.0.1:" + port, "/readyz"), "/readyz answers 200 (degraded)");
            assertEquals(1, healthcheck("127.0.0.1:" + port, "/no-such-probe"), "any status but 200 is unhealthy");
        }
        assertEquals(1, healthcheck("127.0.0.1:" + Ports.free(), "/healthz"), "nothing listening");
    }

    /** Runs the image's health check script with bash, as Docker would, with MCPD_LISTEN set. */
    private static int healthcheck(String listen, String... path) throws Exception {
        return healthcheck(listen, Map.of(), path);
    }

    /** The same, with more variables: the container's MCPD_TLS_* (and a PATH, to leave curl out). */
    private static int healthcheck(String listen, Map<String, String> more, String... path) throws Exception {
        List<String> command = new ArrayList<>(List.of("/bin/bash", DeployFiles.file(HEALTHCHECK).toString()));
        command.addAll(List.of(path));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("MCPD_"));
        builder.environment().put("MCPD_LISTEN", listen);
        builder.environment().putAll(more);
        Process process = builder.start();
        assertTrue(process.waitFor(20, TimeUnit.SECONDS), "the health check ends within 20 s");
        lastOutput = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return process.exitValue();
    }

    /** What the last health check printed (its stderr: why it failed). */
    private static String lastOutput = "";

    /** A PATH holding openssl and timeout but no curl: the script's other way to speak HTTPS. */
    private Map<String, String> withoutCurl() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin-without-curl"));
        for (String tool : List.of("openssl", "timeout")) {
            Process which = new ProcessBuilder("/bin/bash", "-c", "command -v " + tool).start();
            String found = new String(which.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                    .strip();
            assertEquals(0, which.waitFor(), tool + " is on the PATH");
            Files.createSymbolicLink(bin.resolve(tool), Path.of(found));
        }
        return Map.of("PATH", bin.toString());
    }

    @Test
    void overHttpsTheHealthCheckAsksWithCurlOrOpensslAndUnderMutualTlsPresentsTheListenersOwnCertificate()
            throws Exception {
        assumeTrue(TestCertificates.available(), "openssl is not on the PATH: the TLS tests make their certificates"
                + " with it (.ci/run installs it)");
        TestCertificates ca = TestCertificates.authority(dir.resolve("pki"), "internal");
        // As cert-manager makes it with usages [server auth, client auth]: the listener's, and the check's own.
        TestCertificates.Pair listener = ca.serverAndClient("relay", "relay.internal");
        Map<String, String> tls = Map.of("MCPD_TLS_CERT", listener.cert().toString(),
                "MCPD_TLS_KEY", listener.key().toString());
        Map<String, String> noCurl = withoutCurl();
        int port = Ports.free();
        Map<String, String> environment = new HashMap<>(Map.of("MCPD_LISTEN", "127.0.0.1:" + port,
                "MCPD_DATA", dir.resolve("mcpd.db").toString(), "MCPD_UPSTREAMS", "http://127.0.0.1:9"));
        environment.putAll(tls);
        try (RelayApplication relay = RelayApplication.start(McpdConfig.fromEnvironment(environment))) {
            assertEquals(0, healthcheck("127.0.0.1:" + port, tls, "/healthz"), "over HTTPS: " + lastOutput);
            assertEquals(0, healthcheck("0.0.0.0:" + port, tls), "a wildcard listener, the default path");
            assertEquals(0, healthcheck("127.0.0.1:" + port, tls, "/readyz"), "/readyz answers 200 (degraded)");
            assertEquals(1, healthcheck("127.0.0.1:" + port, tls, "/no-such-probe"));
            assertTrue(lastOutput.startsWith("healthcheck: /no-such-probe answered HTTP/1.1 4"), lastOutput);
            assertEquals(1, healthcheck("127.0.0.1:" + port, "/healthz"), "plain HTTP is not served");
            Map<String, String> openssl = new HashMap<>(tls);
            openssl.putAll(noCurl);
            assertEquals(0, healthcheck("127.0.0.1:" + port, openssl, "/healthz"), "with openssl: " + lastOutput);
            assertEquals(1, healthcheck("127.0.0.1:" + port, openssl, "/no-such-probe"), "with openssl");
        }
        assertEquals(1, healthcheck("127.0.0.1:" + port, tls, "/healthz"), "nothing listening");

        environment.put("MCPD_TLS_CLIENT_CA", ca.caCert.toString());
        Map<String, String> mutual = new HashMap<>(tls);
        mutual.put("MCPD_TLS_CLIENT_CA", ca.caCert.toString());
        try (RelayApplication relay = RelayApplication.start(McpdConfig.fromEnvironment(environment))) {
            assertEquals(0, healthcheck("127.0.0.1:" + port, mutual, "/healthz"), "its own certificate: " + lastOutput);
            assertEquals(0, healthcheck("127.0.0.1:" + port, mutual, "/readyz"));
            Map<String, String> openssl = new HashMap<>(mutual);
            openssl.putAll(noCurl);
            assertEquals(0, healthcheck("127.0.0.1:" + port, openssl, "/healthz"), "with openssl: " + lastOutput);
            assertEquals(1, healthcheck("127.0.0.1:" + port, tls, "/healthz"), "no client certificate, no answer");
        }

        // A listener certificate for servers only (extended key usage serverAuth alone) is refused as a client's:
        // the check cannot pass with it, as the script says.
        TestCertificates.Pair serverOnly = ca.server("server-only", "relay.internal");
        environment.putAll(Map.of("MCPD_TLS_CERT", serverOnly.cert().toString(),
                "MCPD_TLS_KEY", serverOnly.key().toString()));
        Map<String, String> serverOnlyCheck = new HashMap<>(environment);
        serverOnlyCheck.keySet().retainAll(Set.of("MCPD_TLS_CERT", "MCPD_TLS_KEY", "MCPD_TLS_CLIENT_CA"));
        try (RelayApplication relay = RelayApplication.start(McpdConfig.fromEnvironment(environment))) {
            assertEquals(1, healthcheck("127.0.0.1:" + port, serverOnlyCheck, "/healthz"));
            assertTrue(lastOutput.startsWith("curl: "), "curl says why: " + lastOutput);
        }
    }
}
