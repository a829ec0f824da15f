package dev.mcpd.cli;

import dev.mcpd.config.McpdConfig;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The options of SPEC §1. {@code mcpd} and each of its commands carry their own copy (a picocli mixin), so
 * an option may stand before or after the command; {@link #merge} then reads both copies in command-line
 * order. Values stay raw text here: {@link McpdConfig#from} parses them, so that an error can name the
 * flag or environment variable a bad value came from, whichever way it was given.
 */
final class CommonOptions {
    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Ingest, probes and metrics address. Env MCPD_LISTEN; default 0.0.0.0:4317.")
    String listen;

    @Option(names = "--data", paramLabel = "PATH",
            description = "Collector store: a file (embedded SQLite) or postgres://…; for the relay it only"
                    + " places the spool. Env MCPD_DATA; default ./data/mcpd.db.")
    String data;

    @Option(names = "--spool-dir", paramLabel = "DIR",
            description = "Spool directory; the relay spools in DIR/relay. Env MCPD_SPOOL_DIR;"
                    + " default <dir of --data>/<stem of --data>.spool.")
    String spoolDir;

    @Option(names = "--upstream", paramLabel = "URL",
            description = "Collector to deliver to; repeat it, primary first. Env MCPD_UPSTREAMS"
                    + " (comma-separated), replaced entirely by any --upstream.")
    List<String> upstreams = new ArrayList<>();

    @Option(names = "--ingest-key", paramLabel = "KEY",
            description = "Key a sender must present. Env MCPD_INGEST_KEY; default none (open).")
    String ingestKey;

    @Option(names = "--upstream-key", paramLabel = "KEY",
            description = "Key the relay presents to every upstream. Env MCPD_UPSTREAM_KEY;"
                    + " default none (each sender's key is passed on).")
    String upstreamKey;

    @Option(names = "--spool-max-bytes", paramLabel = "SIZE",
            description = "Spool bound, e.g. 512MiB. Env MCPD_SPOOL_MAX_BYTES; default 1GiB.")
    String spoolMaxBytes;

    @Option(names = "--max-body-bytes", paramLabel = "SIZE",
            description = "Larger request bodies get 413. Env MCPD_MAX_BODY_BYTES; default 16MiB.")
    String maxBodyBytes;

    @Option(names = "--request-timeout-seconds", paramLabel = "N",
            description = "A request not fully read in time gets 408. Env MCPD_REQUEST_TIMEOUT_SECONDS;"
                    + " default 30.")
    String requestTimeoutSeconds;

    @Option(names = "--workers", paramLabel = "N",
            description = "Delivery workers. Env MCPD_WORKERS; default 4.")
    String workers;

    @Option(names = "--quota-per-minute", paramLabel = "N",
            description = "Collector: ingest requests taken per minute by this replica; past it, 429."
                    + " Env MCPD_QUOTA_PER_MINUTE; default 0 (no quota).")
    String quotaPerMinute;

    @Option(names = "--routes", paramLabel = "DIR",
            description = "A directory of *.camel.yaml routes loaded beside the built-in ones (extension points:"
                    + " direct:mcpd-before-spool, direct:mcpd-after-delivery). Env MCPD_ROUTES; default none.")
    String routes;

    /**
     * The flags given before the command and after it, in that order: a single-valued flag after the
     * command beats the same flag before it, and {@code --upstream} flags add up in the order written.
     */
    static Map<McpdConfig.Option, List<String>> merge(CommonOptions beforeCommand, CommonOptions afterCommand) {
        Map<McpdConfig.Option, List<String>> flags = new EnumMap<>(McpdConfig.Option.class);
        for (CommonOptions given : List.of(beforeCommand, afterCommand)) {
            add(flags, McpdConfig.Option.LISTEN, given.listen);
            add(flags, McpdConfig.Option.DATA, given.data);
            add(flags, McpdConfig.Option.SPOOL_DIR, given.spoolDir);
            given.upstreams.forEach(upstream -> add(flags, McpdConfig.Option.UPSTREAM, upstream));
            add(flags, McpdConfig.Option.INGEST_KEY, given.ingestKey);
            add(flags, McpdConfig.Option.UPSTREAM_KEY, given.upstreamKey);
            add(flags, McpdConfig.Option.SPOOL_MAX_BYTES, given.spoolMaxBytes);
            add(flags, McpdConfig.Option.MAX_BODY_BYTES, given.maxBodyBytes);
            add(flags, McpdConfig.Option.REQUEST_TIMEOUT_SECONDS, given.requestTimeoutSeconds);
            add(flags, McpdConfig.Option.WORKERS, given.workers);
            add(flags, McpdConfig.Option.QUOTA_PER_MINUTE, given.quotaPerMinute);
            add(flags, McpdConfig.Option.ROUTES, given.routes);
        }
        return flags;
    }

    private static void add(Map<McpdConfig.Option, List<String>> flags, McpdConfig.Option option, String value) {
        if (value != null) {
            flags.computeIfAbsent(option, unused -> new ArrayList<>()).add(value);
        }
    }
}
