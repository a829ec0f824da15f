package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The multi-region Compose file validated by a real Compose implementation — {@code docker-compose config}
 * (Debian's Compose 1.29; .ci/run installs it without an engine) — and what it resolves checked: PostgreSQL, two
 * collectors, the relay in front of them in order. Skipped, saying so, where no {@code docker-compose} is on the PATH.
 */
class ComposeConfigTest {

    private static final Path FILE = DeployFiles.root().resolve("deploy/docker/docker-compose.multi-region.yml");

    @TempDir
    Path tmp;

    private static DeployFiles.CliRun compose(Path file, String... args) throws Exception {
        String compose = DeployFiles.tool("MCPD_TEST_DOCKER_COMPOSE", "docker-compose").orElse(null);
        assumeTrue(compose != null, "no docker-compose here: .ci/run installs Debian's (Compose 1.29)");
        List<String> command = new ArrayList<>(List.of(compose, "-f", file.toString(), "config"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).start();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "docker-compose ended");
        return new DeployFiles.CliRun(process.exitValue(), new String(out, StandardCharsets.UTF_8),
                new String(err, StandardCharsets.UTF_8));
    }

    @Test
    void composeAcceptsTheFileAndResolvesTheTopology() throws Exception {
        DeployFiles.CliRun run = compose(FILE);
        assertEquals(0, run.status(), run.err());
        Map<String, Object> resolved = DeployFiles.map(new Load(LoadSettings.builder().build())
                .loadFromString(run.out()), "the resolved file");
        Map<String, Object> services = DeployFiles.map(resolved.get("services"), "services");
        assertTrue(services.keySet().containsAll(List.of("postgres", "collector-1", "collector-2", "relay")),
                services.keySet().toString());
        Map<String, Object> relay = DeployFiles.map(services.get("relay"), "relay");
        Map<String, Object> environment = DeployFiles.map(relay.get("environment"), "relay environment");
        assertEquals("http://collector-1:4317,http://collector-2:4317", environment.get("MCPD_UPSTREAMS"));
        assertEquals(List.of("relay"), relay.get("command"));
    }

    @Test
    void composeAcceptsTheKafkaTopology() throws Exception {
        DeployFiles.CliRun run = compose(DeployFiles.root().resolve(KafkaComposeFileTest.COMPOSE));
        assertEquals(0, run.status(), run.err());
        Map<String, Object> services = DeployFiles.map(DeployFiles.map(new Load(LoadSettings.builder().build())
                .loadFromString(run.out()), "the resolved file").get("services"), "services");
        assertTrue(services.keySet().containsAll(List.of("kafka", "postgres", "collector-1", "collector-2", "relay-1",
                "relay-2")), services.keySet().toString());
    }

    @Test
    void composeRefusesABrokenFile() throws Exception {
        Path broken = tmp.resolve("broken.yml");
        Files.writeString(broken, Files.readString(FILE).replaceFirst("(?m)^services:", "servicez:"));
        assertNotEquals(0, compose(broken, "-q").status(), "the check can fail");
    }
}
