package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.Options;
import dev.mcpd.deploy.DeployFiles.Instruction;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.testing.Ports;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * deploy/docker/Dockerfile (issue 8, SPEC §8), read without a Docker engine: its stages, user, port, volume, health
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
        List<String> command = new java.util.ArrayList<>(List.of("bash", DeployFiles.file(HEALTHCHECK).toString()));
        command.addAll(List.of(path));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("MCPD_LISTEN", listen);
        Process process = builder.start();
        assertTrue(process.waitFor(20, TimeUnit.SECONDS), "the health check ends within 20 s");
        return process.exitValue();
    }
}
