package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The alerting rules checked, and their unit tests (deploy/prometheus/alerts_test.yaml) run, by Prometheus's own
 * promtool: {@code MCPD_TEST_PROMTOOL} (.ci/promtool.sh sets it) or {@code promtool} on the PATH. Skipped, saying
 * so, where neither is.
 */
class PromtoolRulesTest {

    private static String promtool;

    @BeforeAll
    static void findPromtool() {
        promtool = DeployFiles.tool("MCPD_TEST_PROMTOOL", "promtool").orElse(null);
    }

    private static String run(String... args) throws IOException, InterruptedException {
        assumeTrue(promtool != null, "no promtool here: set MCPD_TEST_PROMTOOL or put promtool on the PATH"
                + " (.ci/promtool.sh unpacks Debian's)");
        List<String> command = new ArrayList<>(List.of(promtool));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(Path.of("deploy/prometheus").toFile())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "promtool ended");
        assertEquals(0, process.exitValue(), String.join(" ", command) + ":\n" + output);
        return output;
    }

    @Test
    void theRulesAreValid() throws Exception {
        assertTrue(run("check", "rules", "alerts.yaml").contains("SUCCESS"));
    }

    @Test
    void theirUnitTestsPass() throws Exception {
        assertTrue(run("test", "rules", "alerts_test.yaml").contains("SUCCESS"));
    }
}
