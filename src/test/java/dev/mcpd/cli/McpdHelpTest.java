package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.DocExample;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@code mcpd --help} prints, and the docs that show it. */
class McpdHelpTest {

    @Test
    void theCommandListOfTheCommandLinePageIsTheHelpsOwn() throws Exception {
        McpdRun help = run(Map.of(), "--help");
        assertEquals(0, help.status(), help.err());
        String out = help.out().replace(System.lineSeparator(), "\n");
        int start = out.indexOf("Commands:\n");
        assertTrue(start >= 0, out);
        // The command list ends where the footer begins.
        int end = out.indexOf("Every option also reads", start);
        assertTrue(end > start, out);
        assertEquals(out.substring(start, end),
                DocExample.block(Path.of("docs/command-line.md"), "mcpd-help-commands"));
    }
}
