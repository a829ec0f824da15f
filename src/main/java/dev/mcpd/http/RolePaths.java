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
 * @param pages    the role's own pages, as {@code GET /} lists them after the probes and metrics
 */
public record RolePaths(Set<String> exact, List<String> prefixes, List<String> pages) {

    private static final Set<String> PROBES = Set.of("/healthz", "/readyz", "/metrics");

    public RolePaths {
        exact = Set.copyOf(exact);
        prefixes = List.copyOf(prefixes);
        pages = List.copyOf(pages);
    }

    /** What {@code GET /} answers: what the port takes, and the pages it serves. */
    public String index() {
        StringBuilder text = new StringBuilder("This port takes telemetry as POST: OTLP/HTTP (/v1/traces, /v1/metrics,"
                + " /v1/logs), OTLP/gRPC, and JSON batches (/v1/ingest). Its pages (GET):\n");
        for (String page : List.of("/healthz", "/readyz", "/metrics")) {
            text.append("  ").append(page).append('\n');
        }
        pages.forEach(page -> text.append("  ").append(page).append('\n'));
        return text.toString();
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
