package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.DocExample;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The fixed settings are held once, in {@link InternalTuning}: the "Fixed settings" table of docs/command-line.md is
 * made from the record, one row for each of its values.
 */
class FixedSettingsTableTest {

    @Test
    void theDocumentedFixedSettingsTableIsTheOneTheRecordMakes() throws IOException {
        assertEquals(InternalTuning.markdownTable(), DocExample.table(Path.of("docs/command-line.md"),
                "| fixed setting | value | why not an option |"),
                "put the table InternalTuning.markdownTable() makes in docs/command-line.md");
    }

    @Test
    void everyValueOfTheRecordHasItsRowAndSaysWhy() {
        RecordComponent[] components = InternalTuning.class.getRecordComponents();
        assertEquals(components.length, InternalTuning.DEFAULT.settings().size(),
                "one row per value of InternalTuning: add the new one to settings()");
        Set<String> what = new HashSet<>();
        for (InternalTuning.Setting setting : InternalTuning.DEFAULT.settings()) {
            assertTrue(what.add(setting.what()), setting.what() + " twice");
            assertTrue(!setting.value().isBlank() && !setting.why().isBlank(), setting.what());
            assertTrue(!setting.what().contains("|") && !setting.why().contains("|"), "no | in a Markdown cell");
        }
    }

    @Test
    void theHelpOfTlsCertSaysTheReloadPeriodTheRouteUses() {
        assertTrue(Options.TLS_CERT.meaning().contains("within " + InternalTuning.DEFAULT.tlsReload().toSeconds()
                + " s"), Options.TLS_CERT.meaning());
    }

    /** Texts that quote a fixed setting, which no code can feed: each says the record's value. */
    @Test
    void theTextsThatQuoteAFixedSettingSayItsValue() throws IOException {
        InternalTuning fixed = InternalTuning.DEFAULT;
        String values = Files.readString(Path.of("deploy/helm/mcpd/values.yaml"));
        assertTrue(values.contains("new connections within " + fixed.tlsReload().toSeconds() + " s")
                && values.contains("again within " + fixed.tlsReload().toSeconds() + " s"), "values.yaml: TLS reload");
        assertTrue(values.contains("deliveries in hand (up to " + fixed.stopWait().toSeconds() + " s)"),
                "values.yaml: the stop's wait");
        assertTrue(Files.readString(Path.of("src/main/java/dev/mcpd/cli/DeadReplayCommand.java"))
                .contains("waits (up to " + fixed.replayWait().toSeconds() + " s)"), "the replay's help");
        assertTrue(Files.readString(Path.of("src/main/resources/routes/relay/ingest.camel.yaml"))
                .contains("(or " + fixed.firstByteDeadline().toSeconds() + " s"), "ingest.camel.yaml: first byte");
        try (var pages = Files.list(Path.of("docs"))) {
            for (Path page : pages.filter(file -> file.toString().endsWith(".md")).toList()) {
                var quoted = Pattern.compile("Retry-After: ([0-9]+)").matcher(Files.readString(page));
                while (quoted.find()) {
                    assertEquals(Integer.toString(fixed.retryAfterSeconds()), quoted.group(1),
                            page + ": every Retry-After the docs quote is a 503's");
                }
            }
        }
    }
}
