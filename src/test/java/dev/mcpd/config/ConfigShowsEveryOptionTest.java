package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mcpd config} shows every option: a value other than the default changes what it prints. */
class ConfigShowsEveryOptionTest {

    @TempDir
    Path routes;

    private static final Map<Option<?>, List<Option<?>>> PARTNERS = Map.of(
            Options.TLS_CERT, List.of(Options.TLS_KEY), Options.TLS_KEY, List.of(Options.TLS_CERT),
            Options.TLS_CLIENT_CA, List.of(Options.TLS_CERT, Options.TLS_KEY),
            Options.UPSTREAM_CLIENT_CERT, List.of(Options.UPSTREAM_CLIENT_KEY),
            Options.UPSTREAM_CLIENT_KEY, List.of(Options.UPSTREAM_CLIENT_CERT),
            Options.UPSTREAM_PROBE, List.of(Options.UPSTREAM),
            Options.SOURCE_GROUP, List.of(Options.SOURCE));

    /** A file the TLS options can name (what it holds is read when the listener starts, not by mcpd config). */
    private String pem(String name) {
        try {
            return Files.writeString(routes.resolve(name), "pem").toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aValueOtherThanTheDefaultChangesTheDescription() {
        Map<Option<?>, String> samples = Map.ofEntries(
                Map.entry(Options.LISTEN, "127.0.0.1:9999"),
                Map.entry(Options.DATA, "/elsewhere/mcpd.db"),
                Map.entry(Options.SPOOL_DIR, "/var/spool/mcpd"),
                Map.entry(Options.UPSTREAM, "http://collector:4318"),
                Map.entry(Options.INGEST_KEY, "an-ingest-key"),
                Map.entry(Options.UPSTREAM_KEY, "an-upstream-key"),
                Map.entry(Options.SPOOL_MAX_BYTES, "2GiB"),
                Map.entry(Options.MAX_BODY_BYTES, "1MiB"),
                Map.entry(Options.REQUEST_TIMEOUT_SECONDS, "12"),
                Map.entry(Options.PROBE_PATH, "/health/deep"),
                Map.entry(Options.UPSTREAM_PROBE, "1=http://collector:13133/"),
                Map.entry(Options.PROBE_INTERVAL_SECONDS, "9"),
                Map.entry(Options.PROBE_TIMEOUT_SECONDS, "1"),
                Map.entry(Options.HEALTHY_THRESHOLD, "7"),
                Map.entry(Options.UNHEALTHY_THRESHOLD, "8"),
                Map.entry(Options.WORKERS, "9"),
                Map.entry(Options.MAX_IN_FLIGHT, "64"),
                Map.entry(Options.ORDERED_PATH, "/push"),
                Map.entry(Options.FORWARD_HEADER, "X-Tenant"),
                Map.entry(Options.BATCH_MAX_ENTRIES, "32"),
                Map.entry(Options.BATCH_MAX_BYTES, "256KiB"),
                Map.entry(Options.RETRYABLE_STATUS, "409"),
                Map.entry(Options.SPOOL_MAX_AGE, "7d"),
                Map.entry(Options.TLS_CERT, pem("cert.pem")),
                Map.entry(Options.TLS_KEY, pem("key.pem")),
                Map.entry(Options.TLS_CLIENT_CA, pem("clients.pem")),
                Map.entry(Options.UPSTREAM_CA, pem("upstreams.pem")),
                Map.entry(Options.UPSTREAM_CLIENT_CERT, pem("client.pem")),
                Map.entry(Options.UPSTREAM_CLIENT_KEY, pem("client.key")),
                Map.entry(Options.QUOTA_PER_MINUTE, "600"),
                Map.entry(Options.LEASE_PASS_SECONDS, "5"),
                Map.entry(Options.DEDUP_WINDOW, "30d"),
                Map.entry(Options.RETENTION, "90d"),
                Map.entry(Options.SOURCE, "kafka://broker:9092/telemetry"),
                Map.entry(Options.SOURCE_GROUP, "archivers"),
                Map.entry(Options.ROUTES, routes.toString()));
        List<String> defaults = McpdConfig.from(Map.of(), Map.of()).describe();
        for (Option<?> option : Options.ALL) {
            String sample = samples.get(option);
            assertNotNull(sample, "a sample value for " + option + ": a new option must show in mcpd config too");
            Map<Option<?>, List<String>> flags = new HashMap<>(Map.of(option, List.of(sample)));
            // Files that go together are given together (the listener's TLS needs a certificate and its key).
            PARTNERS.getOrDefault(option, List.of()).forEach(partner -> flags.putIfAbsent(partner,
                    List.of(samples.get(partner))));
            List<String> given = McpdConfig.from(flags, Map.of()).describe();
            assertNotEquals(defaults, given, option + " " + sample + " does not show in mcpd config");
        }
    }
}
