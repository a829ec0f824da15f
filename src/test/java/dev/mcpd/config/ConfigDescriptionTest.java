package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.Golden;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@code mcpd config} prints, one line per section, never a secret. */
class ConfigDescriptionTest {

    /** The lines {@code mcpd config} prints with nothing configured ({@code ConfigCommandTest} runs the command). */
    @Test
    void defaultsDescribeEverySectionInOrder() {
        assertEquals(Golden.text("mcpd-config-defaults.txt").lines().toList(),
                McpdConfig.fromEnvironment(Map.of()).describe());
    }

    @Test
    void relayLineMatchesTheDocumentedExample() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of(
                "MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317",
                "MCPD_DATA", "/data/mcpd.db"));
        assertEquals("relay           2 upstream(s) in order, http://mcpd.eu.internal:4317, http://mcpd.us.internal:4317;"
                + " each sender's key passed on; spool at /data/mcpd.spool/relay, 1024 MiB", line(config, "relay"));
    }

    @Test
    void withUpstreamKeyTheRelayLineSaysItIsPresentedToEveryUpstream() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of(
                "MCPD_UPSTREAMS", "http://mcpd.eu.internal:4317,http://mcpd.us.internal:4317",
                "MCPD_DATA", "/data/mcpd.db",
                "MCPD_UPSTREAM_KEY", "relay-key-123"));
        assertEquals("relay           2 upstream(s) in order, http://mcpd.eu.internal:4317, http://mcpd.us.internal:4317;"
                + " upstream key presented to every upstream; spool at /data/mcpd.spool/relay, 1024 MiB",
                line(config, "relay"));
    }

    @Test
    void listenLineShowsAddressBodyLimitAndTimeout() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of(
                "MCPD_LISTEN", "[::1]:9000", "MCPD_MAX_BODY_BYTES", "512KiB", "MCPD_REQUEST_TIMEOUT_SECONDS", "5"));
        assertEquals("listen          [::1]:9000; bodies up to 512 KiB, read within 5 s", line(config, "listen"));
    }

    @Test
    void ingestLineSaysWhetherASenderKeyIsRequired() {
        assertEquals("ingest          sender key required (--ingest-key)",
                line(McpdConfig.fromEnvironment(Map.of("MCPD_INGEST_KEY", "k")), "ingest"));
    }

    @Test
    void storeLineRedactsThePostgresPassword() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of("MCPD_DATA", "postgres://mcpd:hunter2@db:5432/mcpd"));
        assertEquals("store           postgres://mcpd:***@db:5432/mcpd (PostgreSQL)", line(config, "store"));
        assertEquals("relay           no upstream (name one with --upstream or MCPD_UPSTREAMS); each sender's key"
                + " passed on; spool at ./data/mcpd.spool/relay, 1024 MiB", line(config, "relay"));
    }

    @Test
    void storeLineRedactsAPasswordGivenAsQueryParameter() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of("MCPD_DATA",
                "postgresql://db/mcpd?user=mcpd&password=hunter2&sslmode=require"));
        assertEquals("store           postgresql://db/mcpd?user=mcpd&password=***&sslmode=require (PostgreSQL)",
                line(config, "store"));
    }

    @Test
    void anUpstreamUrlWithAQueryOrFragmentIsRefusedWithoutPrintingItsKey() {
        // Issue 12: a query would show in metric labels, /relay/status and /readyz, and breaks appending a target.
        for (String url : List.of("https://b.example:8443/x?api_key=k3y", "http://a:1/?token=url-s3cr3t",
                "http://a:1/base#frag")) {
            ConfigException refused = assertThrows(ConfigException.class,
                    () -> McpdConfig.from(Map.of(Options.UPSTREAM, List.of(url)), Map.of()));
            assertTrue(refused.getMessage().contains("carries a query or fragment"), refused.getMessage());
            assertFalse(refused.getMessage().contains("k3y") || refused.getMessage().contains("s3cr3t"),
                    refused.getMessage());
        }
    }

    @Test
    void anUpstreamUrlCarryingAUserOrPasswordIsRefusedWithoutPrintingIt() {
        for (String url : List.of("https://relay:hunter2@a.example", "https://hunter2@b.example:8443/x")) {
            ConfigException refused = assertThrows(ConfigException.class,
                    () -> McpdConfig.from(Map.of(Options.UPSTREAM, List.of(url)), Map.of()));
            assertTrue(refused.getMessage().contains("carries a user or password: give the relay's key with"
                    + " --upstream-key instead"), refused.getMessage());
            assertFalse(refused.getMessage().contains("hunter2"), refused.getMessage());
        }
    }

    @Test
    void deliveryLineCountsWorkers() {
        assertEquals("delivery        16 workers; up to 256 in flight per upstream; batches and OTLP merges of up to 256 entries, 1 MiB", line(McpdConfig.fromEnvironment(Map.of("MCPD_WORKERS", "16")), "delivery"));
        assertEquals("delivery        1 worker; up to 256 in flight per upstream; batches and OTLP merges of up to 256 entries, 1 MiB", line(McpdConfig.fromEnvironment(Map.of("MCPD_WORKERS", "1")), "delivery"));
    }

    @Test
    void noSecretAppearsInTheDescriptionOrInToString() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of(
                "MCPD_INGEST_KEY", "ingest-s3cr3t",
                "MCPD_UPSTREAM_KEY", "upstream-s3cr3t",
                "MCPD_DATA", "postgres://mcpd:db-s3cr3t@db/mcpd",
                "MCPD_UPSTREAMS", "http://a:1/"));
        String printed = String.join("\n", config.describe()) + "\n" + config;
        assertFalse(printed.contains("s3cr3t"), printed);
        assertTrue(config.toString().startsWith("McpdConfig[listen: 0.0.0.0:4317"), config.toString());
    }

    @Test
    void everySectionNameIsPaddedTo16Columns() {
        for (String line : McpdConfig.fromEnvironment(Map.of()).describe()) {
            assertTrue(line.charAt(15) == ' ' && line.charAt(16) != ' ', line);
        }
    }

    private static String line(McpdConfig config, String section) {
        return config.describe().stream().filter(l -> l.startsWith(section + " ")).findFirst().orElseThrow();
    }
}
