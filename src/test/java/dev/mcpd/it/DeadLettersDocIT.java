package dev.mcpd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.DocExample;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/dead-letters.md's "Try it on a fresh relay", run as written with bash, curl and the packaged jar as
 * {@code mcpd}: the runbook's commands see the refused requests, replay them into the running relay once the cause is
 * fixed, and the collector has them.
 */
class DeadLettersDocIT {

    @TempDir
    Path tmp;

    @Test
    void theRunbookWorksAsWrittenOnAFreshRelay() throws Exception {
        String script = DocExample.blockUnder(Path.of("docs/dead-letters.md"), "## Try it on a fresh relay", "sh");

        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path mcpd = bin.resolve("mcpd");
        Files.writeString(mcpd, "#!/bin/sh\nexec '" + PackagedJar.java() + "' -jar '" + PackagedJar.jar() + "' \"$@\"\n");
        Files.setPosixFilePermissions(mcpd, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path work = Files.createDirectories(tmp.resolve("work"));
        PackagedJar.Result run = PackagedJar.run(work, Map.of(
                "PATH", bin + ":" + System.getenv("PATH"),
                "RELAY_PORT", Integer.toString(PackagedJar.freePort()),
                "COLLECTOR_PORT", Integer.toString(PackagedJar.freePort())),
                List.of("bash", "-euo", "pipefail", "-c", script), Duration.ofSeconds(120));
        assertEquals(0, run.status(), run.toString());
        List<String> lines = run.outLines();
        assertTrue(lines.get(0).startsWith("SEQ  REFUSED AT"), run.toString());
        assertTrue(lines.get(1).matches("1 +\\S+ +http://127\\.0\\.0\\.1:\\d+ +401 +missing or wrong ingest key.*"
                + " +POST /v1/ingest +20"), run.toString());
        assertTrue(lines.get(3).matches("replayed 2 dead letter\\(s\\); the running relay took 2 into its spool"
                + " \\(dead seq as new seq: 1 as \\d+, 2 as \\d+\\)"), run.toString());
        assertTrue(lines.get(4).matches("\\{\"relay\":\"[0-9a-f]{32}\",\"seq\":\\d+,\"pending\":0,"
                + "\"deadLettered\":0}"), run.toString());
        assertEquals("{\"batches\":2,\"events\":2,\"duplicates\":0,\"conflicts\":0}", lines.get(5), run.toString());
        assertEquals("0", lines.get(6).strip(), run.toString());
    }
}
