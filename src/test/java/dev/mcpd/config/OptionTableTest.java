package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.DocExample;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each option is declared once, in {@link Options}: the option table of docs/command-line.md is made from the declarations. */
class OptionTableTest {

    @Test
    void theDocumentedOptionTableIsTheOneTheDeclarationsMake() throws IOException {
        assertEquals(Options.markdownTable(), DocExample.table(Path.of("docs/command-line.md"),
                "| option | env | default | roles | meaning |"),
                "put the table Options.markdownTable() makes in docs/command-line.md");
    }

    @Test
    void everyOptionHasItsOwnFlagAndVariableAndARole() {
        Set<String> flags = new HashSet<>();
        Set<String> variables = new HashSet<>();
        for (Option<?> option : Options.ALL) {
            assertTrue(flags.add(option.flag()), option + " declared twice");
            assertTrue(variables.add(option.environmentVariable()), option.environmentVariable() + " twice");
            assertTrue(option.environmentVariable().startsWith("MCPD_"), option.environmentVariable());
            assertTrue(!option.roles().isEmpty(), option + " belongs to no role");
        }
    }

    @Test
    void eachRoleTakesItsOwnOptions() {
        assertTrue(Options.of(Role.RELAY).containsAll(List.of(Options.UPSTREAM, Options.WORKERS, Options.SPOOL_DIR)));
        assertTrue(!Options.of(Role.RELAY).contains(Options.QUOTA_PER_MINUTE), "the quota is the collector's");
        assertTrue(Options.of(Role.SERVE).contains(Options.QUOTA_PER_MINUTE));
        assertTrue(!Options.of(Role.SERVE).contains(Options.UPSTREAM));
    }
}
