package dev.mcpd.ingest;

import java.util.Set;

/** Which request paths are ingest, which are OTLP, and which belong to the process itself. */
public final class IngestPaths {

    private static final Set<String> OTLP = Set.of("/v1/traces", "/v1/logs", "/v1/metrics");
    private static final Set<String> PROBES = Set.of("/healthz", "/readyz", "/metrics");

    private IngestPaths() {
    }

    /** OTLP/HTTP export paths: answered with an OTLP partial-success response. */
    public static boolean isOtlp(String path) {
        return OTLP.contains(path);
    }

    /** Paths that are never ingest: the probes, metrics and the relay's own endpoints. */
    public static boolean isReserved(String path) {
        return PROBES.contains(path) || path.equals("/relay") || path.startsWith("/relay/");
    }
}
