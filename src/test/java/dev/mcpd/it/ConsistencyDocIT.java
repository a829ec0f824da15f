package dev.mcpd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.DocExample;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/consistency.md's worked example and client, run as written (the shell block with bash and curl, the Python
 * class with python3) against the packaged collector and a packaged relay in front of it.
 */
class ConsistencyDocIT {

    static final Path DOC = Path.of("docs/consistency.md");

    @TempDir
    Path tmp;

    static String block(String heading, String language) throws IOException {
        return DocExample.blockUnder(DOC, heading, language);
    }

    /**
     * The lines with what differs from relay to relay put in words: the relay's id (32 hex digits) and the sequence
     * numbers it handed out.
     */
    static List<String> normalised(List<String> lines) {
        return lines.stream().map(line -> line.replaceAll("[0-9a-f]{32}", "RELAY-ID")
                .replaceAll("\"seq\":[0-9]+", "\"seq\":SEQ").replaceAll("up to [0-9]+", "up to SEQ")).toList();
    }

    @Test
    void theWorkedExampleAndTheClientRunAsWritten() throws Exception {
        int collectorPort = PackagedJar.freePort();
        int relayPort = PackagedJar.freePort();
        Path work = Files.createDirectories(tmp.resolve("work"));
        try (PackagedJar collector = PackagedJar.start(tmp, collectorPort, Map.of(), "serve", "--listen",
                "127.0.0.1:" + collectorPort, "--data", tmp.resolve("collector.db").toString());
             PackagedJar relay = PackagedJar.start(tmp, relayPort, Map.of(), "relay", "--listen",
                     "127.0.0.1:" + relayPort, "--data", tmp.resolve("relay").resolve("mcpd.db").toString(),
                     "--upstream", "http://127.0.0.1:" + collectorPort)) {
            String relayUrl = "http://127.0.0.1:" + relayPort;

            PackagedJar.Result shell = PackagedJar.run(work, Map.of("RELAY", relayUrl),
                    List.of("bash", "-euo", "pipefail", "-c", block("## A worked example", "sh")));
            assertEquals(0, shell.status(), shell.toString());
            assertEquals(normalised(DocExample.block(DOC, "worked-example-output").lines().toList()),
                    normalised(shell.outLines()), shell.toString());
            try (var left = Files.list(work)) {
                assertEquals(0, left.filter(f -> !f.getFileName().toString().startsWith("run-")).count(),
                        "the example cleans up after itself");
            }

            String client = block("## A client, in a few lines", "python") + "\n"
                    + "tokens = RelayTokens()\n"
                    + "for i in range(3):\n"
                    + "    tokens.post('" + relayUrl + "/v1/ingest', b'{\"events\":[{\"n\":%d}]}' % i)\n"
                    + "tokens.commit(lambda relay: '" + relayUrl + "')\n"
                    + "print('committed', tokens.highest)\n";
            PackagedJar.Result python = PackagedJar.run(work, Map.of(), List.of("python3", "-c", client));
            assertEquals(0, python.status(), python.toString());
            assertTrue(python.out().startsWith("committed {'"), python.toString());
        }
    }
}
