package dev.mcpd.http;

import java.util.List;
import java.util.Set;

/**
 * The paths of a role that are not ingest: they answer {@code GET}, and a {@code POST} there is a 405. The probes and
 * {@code /metrics} belong to every role; each role adds its own ({@code /relay/…} for the relay, {@code /v1/stats}
 * for the collector), so the shared host knows no role's paths.
 *
 * @param exact    paths taken as they are
 * @param prefixes paths taken with everything below them ({@code /relay} for {@code /relay} and {@code /relay/…})
 */
public record RolePaths(Set<String> exact, List<String> prefixes) {

    private static final Set<String> PROBES = Set.of("/healthz", "/readyz", "/metrics");

    public RolePaths {
        exact = Set.copyOf(exact);
        prefixes = List.copyOf(prefixes);
    }

    /** Whether {@code path} is one of them (never ingest). */
    public boolean isReserved(String path) {
        if (PROBES.contains(path) || exact.contains(path)) {
            return true;
        }
        for (String prefix : prefixes) {
            if (path.equals(prefix) || path.startsWith(prefix + "/")) {
                return true;
            }
        }
        return false;
    }
}
