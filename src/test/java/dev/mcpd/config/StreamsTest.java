package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which entries travel in order and which sender headers travel with them: the defaults, {@code none}, and the
 * names and paths refused at start, each with one line naming the flag or variable.
 */
class StreamsTest {

    private static Streams given(Map<Option<?>, List<String>> flags, Map<String, String> environment) {
        return McpdConfig.from(flags, environment).streams();
    }

    @Test
    void byDefaultRemoteWriteAndOtlpMetricsPathsAreOrderedAndTheTenantAndRemoteWriteVersionForwarded() {
        Streams defaults = given(Map.of(), Map.of());
        assertEquals(List.of("X-Scope-OrgID", "X-Prometheus-Remote-Write-Version"), defaults.forwardHeaders());
        assertEquals(List.of("/api/v1/write", "/api/v1/push", "/api/v1/otlp/*", "/otlp/*", "/api/prom/push",
                "/v1/metrics"), defaults.orderedPaths());
        assertTrue(defaults.ordered("/api/v1/write", false));
        assertTrue(defaults.ordered("/otlp/v1/metrics", false), "a prefix ending in *");
        assertFalse(defaults.ordered("/api/v1/write2", false), "a path, not a prefix");
        assertFalse(defaults.ordered("/v1/traces", false));
        assertTrue(defaults.ordered("/anything", true), "a request with X-Prometheus-Remote-Write-Version");
        assertEquals(defaults, Streams.defaults());
    }

    @Test
    void flagsReplaceTheDefaultsAndNoneTurnsEachOff() {
        Streams flags = given(Map.of(Options.ORDERED_PATH, List.of("/push"), Options.FORWARD_HEADER,
                List.of("X-Tenant", "X-Region")), Map.of());
        assertEquals(List.of("/push"), flags.orderedPaths());
        assertEquals(List.of("X-Tenant", "X-Region"), flags.forwardHeaders());
        Streams none = given(Map.of(), Map.of("MCPD_ORDERED_PATHS", "none", "MCPD_FORWARD_HEADERS", "none"));
        assertEquals(List.of(), none.orderedPaths());
        assertEquals(List.of(), none.forwardHeaders());
        assertFalse(none.ordered("/api/v1/write", true), "none: nothing in order, a remote-write header neither");
        assertEquals("nothing in order (--ordered-path none); forwarded with each entry: no sender header",
                none.describe());
        Streams variables = given(Map.of(), Map.of("MCPD_FORWARD_HEADERS", "X-Scope-OrgID,X-Tenant"));
        assertEquals(List.of("X-Scope-OrgID", "X-Tenant"), variables.forwardHeaders());
    }

    @Test
    void headersThatSteerTheRelayOrTheConnectionAreRefusedInOneLine() {
        for (String name : List.of("Host", "authorization", "X-MCPD-Key", "Content-Length", "Content-Type",
                "Content-Encoding", "Transfer-Encoding", "Connection", "Idempotency-Key", "mcpd-relay-wait",
                "Mcpd-Anything", ":authority", "Upgrade", "TE")) {
            ConfigException refused = assertThrows(ConfigException.class,
                    () -> given(Map.of(Options.FORWARD_HEADER, List.of(name)), Map.of()), name);
            assertTrue(refused.getMessage().startsWith("invalid value for --forward-header: "), refused.getMessage());
            assertEquals(1, refused.getMessage().lines().count(), refused.getMessage());
        }
        ConfigException notAName = assertThrows(ConfigException.class,
                () -> given(Map.of(), Map.of("MCPD_FORWARD_HEADERS", "X Tenant")));
        assertEquals("invalid value for --forward-header (environment variable MCPD_FORWARD_HEADERS): 'X Tenant' is"
                + " not a header name (letters, digits and"
                + " !#$%&'*+-.^_`|~ only)", notAName.getMessage());
        ConfigException twice = assertThrows(ConfigException.class,
                () -> given(Map.of(Options.FORWARD_HEADER, List.of("X-Tenant", "x-tenant")), Map.of()));
        assertTrue(twice.getMessage().contains("x-tenant is named twice"), twice.getMessage());
        ConfigException noneBeside = assertThrows(ConfigException.class,
                () -> given(Map.of(Options.FORWARD_HEADER, List.of("none", "X-Tenant")), Map.of()));
        assertTrue(noneBeside.getMessage().contains("none stands alone"), noneBeside.getMessage());
    }

    @Test
    void anOrderedPathIsAPathOrAPrefixEndingInAStar() {
        for (String path : List.of("api/v1/write", "/a*b", "/a**", "/*/x", "/x?y", "/x y")) {
            ConfigException refused = assertThrows(ConfigException.class,
                    () -> given(Map.of(Options.ORDERED_PATH, List.of(path)), Map.of()), path);
            assertTrue(refused.getMessage().startsWith("invalid value for --ordered-path: '" + path.strip()
                    + "' is not a path"), refused.getMessage());
        }
    }
}
