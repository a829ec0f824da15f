package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.Golden;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code mcpd config} prints the effective configuration, one line per section. */
class ConfigCommandTest {
    /** What {@code mcpd config} prints with nothing configured. */
    static final String DEFAULTS = "mcpd-config-defaults.txt";
    private static final String DOCUMENTED_RELAY_LINE = "relay           2 upstream(s) in order,"
            + " http://mcpd.eu.internal:4317, http://mcpd.us.internal:4317; each sender's key passed on;"
            + " spool at /data/mcpd.spool/relay, 1024 MiB";

    @Test
    void relayLineMatchesTheDocumentedExample() {
        // $ MCPD_UPSTREAMS=http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317 mcpd --data /data/mcpd.db config | grep ^relay
        McpdRun run = run(Map.of("MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317"),
                "--data", "/data/mcpd.db", "config");
        assertEquals(0, run.status());
        assertEquals("", run.err());
        assertEquals(DOCUMENTED_RELAY_LINE, run.section("relay"));
    }

    /** The README's sample of {@code mcpd config} is what the program prints for the command it shows. */
    @Test
    void theReadmesSampleIsTheProgramsOutput() throws Exception {
        String sample = DocExample.output(Path.of("README.md"),
                "MCPD_UPSTREAMS=http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317 bin/mcpd --data"
                        + " /data/mcpd.db config");
        McpdRun run = run(Map.of("MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317"),
                "--data", "/data/mcpd.db", "config");
        assertEquals(run.out(), sample);
    }

    @Test
    void withUpstreamKeyTheMiddlePartSaysTheKeyIsPresentedToEveryUpstream() {
        McpdRun run = run(Map.of("MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317"),
                "--data", "/data/mcpd.db", "config", "--upstream-key", "relay-key");
        assertEquals(DOCUMENTED_RELAY_LINE.replace("each sender's key passed on", "upstream key presented to every upstream"),
                run.section("relay"));
    }

    /** The defaults, every section in order; the golden file is {@link ConfigDescriptionTest}'s too. */
    @Test
    void printsTheDefaultsOneLinePerSectionInOrderAndExitsZero() {
        McpdRun run = run(Map.of(), "config");
        assertEquals(0, run.status());
        Golden.assertText(DEFAULTS, run.out());
        assertEquals("", run.err());
    }

    @Test
    void optionsBeforeAndAfterTheCommandAreEqual() {
        String[] options = {"--data", "/x/store.db", "--listen", "127.0.0.1:9", "--upstream", "http://a:1",
                "--upstream", "http://b:1", "--ingest-key", "k", "--upstream-key", "u", "--spool-max-bytes", "2 MiB",
                "--max-body-bytes", "64KiB", "--request-timeout-seconds", "7", "--workers", "3", "--spool-dir", "/s"};
        McpdRun before = run(Map.of(), concat(options, "config"));
        McpdRun after = run(Map.of(), concat(new String[] {"config"}, options));
        assertEquals(0, before.status(), before.err());
        assertEquals(before.out(), after.out());
        assertEquals(List.of(
                "listen          127.0.0.1:9; bodies up to 64 KiB, read within 7 s",
                "ingest          sender key required (--ingest-key)",
                "store           /x/store.db (embedded SQLite)",
                "upkeep          lease renewed every 10 s (free 30 s after the holder's last pass); keys kept 7d; batches kept for ever",
                "source          HTTP only (consume a Kafka topic too with --source)",
                "relay           2 upstream(s) in order, http://a:1, http://b:1; upstream key presented to every"
                        + " upstream; spool at /s/relay, 2 MiB",
                "delivery        3 workers; up to 256 in flight per upstream; batches and OTLP merges of up to 256 entries, 1 MiB",
                "streams         in order: /api/v1/write, /api/v1/push, /api/v1/otlp/*, /otlp/*, /api/prom/push,"
                        + " /v1/metrics, and any request with X-Prometheus-Remote-Write-Version; forwarded with each"
                        + " entry: X-Scope-OrgID, X-Prometheus-Remote-Write-Version",
                "health          GET /readyz every 5 s, 2 s timeout; out of service after 3 failed checks in a row, back after 2"
                        + " successful ones",
                "dead letters    4xx answers (but 408, 429) kept in /s/relay/dead; nothing expires",
                "tls             listener plain HTTP; https:// upstreams trusted by the JDK's trust store",
                "routes          built-in only"), after.outLines());
    }

    @Test
    void equalsFormOfOptionsWorksToo() {
        assertEquals("delivery        9 workers; up to 256 in flight per upstream; batches and OTLP merges of up to 256 entries, 1 MiB", run(Map.of(), "config", "--workers=9").section("delivery"));
    }

    @Test
    void flagBeatsEnvironmentVariable() {
        McpdRun run = run(Map.of("MCPD_WORKERS", "8", "MCPD_DATA", "/env/mcpd.db"), "config", "--workers", "2");
        assertEquals("delivery        2 workers; up to 256 in flight per upstream; batches and OTLP merges of up to 256 entries, 1 MiB", run.section("delivery"));
        assertEquals("store           /env/mcpd.db (embedded SQLite)", run.section("store"));
    }

    @Test
    void upstreamFlagReplacesTheWholeVariableList() {
        McpdRun run = run(Map.of("MCPD_UPSTREAMS", "http://env-a:1,http://env-b:1"),
                "--upstream", "http://flag:1", "config");
        assertTrue(run.section("relay").startsWith("relay           1 upstream(s) in order, http://flag:1;"),
                run.section("relay"));
    }

    @Test
    void upstreamFlagsBeforeAndAfterTheCommandAddUpInTheOrderWritten() {
        McpdRun run = run(Map.of(), "--upstream", "http://first:1", "config", "--upstream", "http://second:1");
        assertTrue(run.section("relay").startsWith("relay           2 upstream(s) in order, http://first:1,"
                + " http://second:1;"), run.section("relay"));
    }

    @Test
    void aFlagAfterTheCommandBeatsTheSameFlagBeforeIt() {
        assertEquals("delivery        5 workers; up to 256 in flight per upstream; batches and OTLP merges of up to 256 entries, 1 MiB",
                run(Map.of(), "--workers", "2", "config", "--workers", "5").section("delivery"));
    }

    @Test
    void sizesAcceptPlainBytesAndBinaryUnits() {
        assertTrue(run(Map.of(), "config", "--spool-max-bytes", "1048576").section("relay").endsWith(", 1 MiB"));
        assertTrue(run(Map.of(), "config", "--spool-max-bytes", "512KiB").section("relay").endsWith(", 512 KiB"));
        assertTrue(run(Map.of(), "config", "--spool-max-bytes", "3 MiB").section("relay").endsWith(", 3 MiB"));
        assertTrue(run(Map.of(), "config", "--spool-max-bytes", "2GiB").section("relay").endsWith(", 2048 MiB"));
        assertTrue(run(Map.of("MCPD_MAX_BODY_BYTES", "1000"), "config").section("listen").contains("bodies up to 1000 bytes"));
    }

    @Test
    void spoolDirFollowsTheDataPathUnlessGiven() {
        assertTrue(run(Map.of(), "config", "--data", "/var/lib/mcpd/main.db").section("relay")
                .contains("spool at /var/lib/mcpd/main.spool/relay,"));
        assertTrue(run(Map.of(), "config", "--data", "mcpd.db").section("relay").contains("spool at mcpd.spool/relay,"));
        assertTrue(run(Map.of("MCPD_SPOOL_DIR", "/fast"), "config", "--data", "/var/lib/mcpd/main.db").section("relay")
                .contains("spool at /fast/relay,"));
        assertTrue(run(Map.of(), "config", "--data", "postgres://mcpd@db/mcpd").section("relay")
                .contains("spool at ./data/mcpd.spool/relay,"));
    }

    @Test
    void secretsAreNeverPrinted() {
        McpdRun run = run(Map.of("MCPD_UPSTREAM_KEY", "up-S3CRET"),
                "--ingest-key", "in-S3CRET",
                "--data", "postgres://mcpd:db-S3CRET@db:5432/mcpd",
                "config", "--upstream", "https://collector.example/");
        assertEquals(0, run.status(), run.err());
        assertFalse(run.out().contains("S3CRET"), run.out());
        assertEquals("store           postgres://mcpd:***@db:5432/mcpd (PostgreSQL)", run.section("store"));
        assertEquals("ingest          sender key required (--ingest-key)", run.section("ingest"));
    }

    private static String[] concat(String[] first, String... second) {
        String[] all = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, all, first.length, second.length);
        return all;
    }
}
