package dev.mcpd.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Every option of mcpd, each declared once: flag, variable, value label, meaning, default, parser and check, and the
 * roles that take it. A new option is one entry here (and its field in a section of {@link McpdConfig}); the command
 * line, its help, and the option table of docs/command-line.md follow from it.
 */
public final class Options {

    public static final Option<ListenAddress> LISTEN = Option.of("--listen", "HOST:PORT",
            "ingest, probes and metrics address; port 0 lets the kernel choose a free one, which the start-up line names",
            "0.0.0.0:4317", ListenAddress::parse,
            Role.RELAY, Role.SERVE);
    public static final Option<String> DATA = Option.of("--data", "PATH",
            "the collector's store, a file (embedded SQLite) or postgres://…; the relay keeps no store, and its spool"
                    + " goes beside this path unless --spool-dir",
            "./data/mcpd.db", McpdConfig::checkData, Role.RELAY, Role.SERVE);
    public static final Option<Path> SPOOL_DIR = Option.withoutDefault("--spool-dir", "DIR",
            "spool directory; the relay spools in DIR/relay", "<dir of --data>/<stem of --data>.spool",
            OptionValues::parseDirectory, Role.RELAY);
    // The one exception to MCPD_<NAME>: the variable holds the whole list.
    public static final Option<URI> UPSTREAM = Option.repeatable("--upstream", "MCPD_UPSTREAMS", "URL",
            "collector (http[s]://) or Kafka topic (kafka[s]://HOST:PORT[,HOST:PORT]/TOPIC) to deliver to; repeat it,"
                    + " primary first (any --upstream replaces MCPD_UPSTREAMS)",
            UpstreamUrls::parseUpstream, Role.RELAY);
    public static final Option<Secret> INGEST_KEY = Option.withoutDefault("--ingest-key", "KEY",
            "key a sender must present", "none (open)", Secret::of, Role.RELAY, Role.SERVE);
    public static final Option<Secret> UPSTREAM_KEY = Option.withoutDefault("--upstream-key", "KEY",
            "key the relay presents to every upstream", "none (each sender's key is passed on)", Secret::of,
            Role.RELAY);
    public static final Option<Long> SPOOL_MAX_BYTES = Option.of("--spool-max-bytes", "SIZE",
            "spool bound, dead letters included, e.g. 512MiB; past it requests get 503; at least 1B", "1GiB",
            text -> OptionValues.atLeastOneByte(ByteSize.parse(text)), Role.RELAY);
    public static final Option<Long> MAX_BODY_BYTES = Option.of("--max-body-bytes", "SIZE",
            "larger request bodies get 413; at most 1GiB and a quarter of the heap", "16MiB",
            text -> Listener.checkMaxBodyBytes(ByteSize.parse(text)),
            Role.RELAY, Role.SERVE);
    public static final Option<Duration> REQUEST_TIMEOUT_SECONDS = Option.of("--request-timeout-seconds", "N",
            "a request not fully read in time gets 408; 1 to " + Listener.MAX_REQUEST_TIMEOUT_SECONDS, "30",
            text -> Listener.checkRequestTimeout(Duration.ofSeconds(OptionValues.wholeNumber(text))),
            Role.RELAY, Role.SERVE);
    public static final Option<Integer> WORKERS = Option.of("--workers", "N",
            "delivery lanes: each takes the oldest entries and sends them without waiting for answers; 1 to "
                    + DeliveryLanes.MAX_WORKERS, "4",
            text -> DeliveryLanes.checkWorkers(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<Integer> MAX_IN_FLIGHT = Option.of("--max-in-flight", "N",
            "the most requests in flight to one upstream; the window adapts between 1 and N; 1 to "
                    + DeliveryLanes.MAX_IN_FLIGHT, "256",
            text -> DeliveryLanes.checkMaxInFlight(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<String> ORDERED_PATH = Option.repeatable("--ordered-path", "MCPD_ORDERED_PATHS", "PATH",
            "entries to this path, or a prefix ending in *, travel in order: each stream (path, credential, forwarded"
                    + " headers) one request at a time, oldest first, as receivers of Prometheus remote write need;"
                    + " none: no stream in order",
            "/api/v1/write,/api/v1/push,/api/v1/otlp/*,/otlp/*,/api/prom/push,/v1/metrics", Streams::checkOrderedPath,
            Role.RELAY);
    public static final Option<String> FORWARD_HEADER = Option.repeatable("--forward-header", "MCPD_FORWARD_HEADERS",
            "NAME", "a sender's header kept with each entry and sent with it upstream (the tenant of Mimir, Loki,"
                    + " Tempo, Cortex); none: no header",
            "X-Scope-OrgID,X-Prometheus-Remote-Write-Version", Streams::checkForwardHeader, Role.RELAY);
    public static final Option<Integer> BATCH_MAX_ENTRIES = Option.of("--batch-max-entries", "N",
            "the most entries in one request: a relay batch to an mcpd collector, a merged OTLP request to another"
                    + " upstream; 1: each alone; 1 to " + DeliveryLanes.MAX_BATCH_ENTRIES,
            "256", text -> DeliveryLanes.checkBatchMaxEntries(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<Long> BATCH_MAX_BYTES = Option.of("--batch-max-bytes", "SIZE",
            "the most body bytes in one batch or merge (decoded, for a merge); a larger entry travels alone; at"
                    + " least 1B", "1MiB",
            text -> OptionValues.atLeastOneByte(ByteSize.parse(text)), Role.RELAY);
    public static final Option<String> PROBE_PATH = Option.of("--probe-path", "PATH",
            "path every upstream is asked with GET to check it: a dynamic check, not a static file", "/readyz",
            HealthChecks::checkProbePath, Role.RELAY);
    public static final Option<UpstreamProbeAddress> UPSTREAM_PROBE = Option.repeatable("--upstream-probe",
            "MCPD_UPSTREAM_PROBES", "N=URL",
            "where upstream N (1: the first --upstream) is checked instead of at its --probe-path (such as"
                    + " 2=http://gateway:13133/); N=off: not probed, its deliveries alone check it",
            UpstreamProbeAddress::parse, Role.RELAY);
    public static final Option<Duration> PROBE_INTERVAL_SECONDS = Option.of("--probe-interval-seconds", "N",
            "time between checks of one upstream; 1 to " + HealthChecks.MAX_PROBE_SECONDS, "5",
            text -> HealthChecks.checkProbeSeconds(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<Duration> PROBE_TIMEOUT_SECONDS = Option.of("--probe-timeout-seconds", "N",
            "a check answered later than this fails, even a 200; shorter than the interval; 1 to "
                    + HealthChecks.MAX_PROBE_SECONDS, "2",
            text -> HealthChecks.checkProbeSeconds(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<Integer> HEALTHY_THRESHOLD = Option.of("--healthy-threshold", "N",
            "successful checks in a row that bring an upstream back into service; 1 to "
                    + HealthChecks.MAX_THRESHOLD, "2",
            text -> HealthChecks.checkThreshold(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<Integer> UNHEALTHY_THRESHOLD = Option.of("--unhealthy-threshold", "N",
            "failed checks in a row (probes or deliveries) that take an upstream out of service; 1 to "
                    + HealthChecks.MAX_THRESHOLD, "3",
            text -> HealthChecks.checkThreshold(OptionValues.wholeNumber(text)), Role.RELAY);
    public static final Option<Set<Integer>> RETRYABLE_STATUS = Option.withoutDefault("--retryable-status", "CODES",
            "4xx statuses retried like a 5xx instead of dead-lettered, comma-separated (409,425); 408 and 429 always"
                    + " are", "none", DeadLetterPolicy::parseRetryableStatuses, Role.RELAY);
    public static final Option<Duration> SPOOL_MAX_AGE = Option.withoutDefault("--spool-max-age", "DURATION",
            "an entry waiting longer (e.g. 24h) moves to dead/ as expired, kept and replayable; 1s to "
                    + DurationText.format(DeadLetterPolicy.MAX_SPOOL_AGE),
            "none: nothing"
                    + " expires", text -> DeadLetterPolicy.checkSpoolMaxAge(DurationText.parse(text)), Role.RELAY);
    public static final Option<Path> TLS_CERT = Option.withoutDefault("--tls-cert", "FILE",
            "the listener's certificate chain (PEM): HTTPS only, HTTP/1.1 and HTTP/2 by ALPN; with --tls-key; files"
                    + " changed on disk are used for new connections within "
                    + InternalTuning.DEFAULT.tlsReload().toSeconds() + " s", "none: plain HTTP",
            TlsFiles::readableFile, Role.RELAY, Role.SERVE);
    public static final Option<Path> TLS_KEY = Option.withoutDefault("--tls-key", "FILE",
            "the private key of --tls-cert (PEM, PKCS#8 or PKCS#1)", "none", TlsFiles::readableFile, Role.RELAY,
            Role.SERVE);
    public static final Option<Path> TLS_CLIENT_CA = Option.withoutDefault("--tls-client-ca", "FILE",
            "authorities (PEM): senders must present a certificate one of them signed (mutual TLS)", "none",
            TlsFiles::readableFile, Role.RELAY, Role.SERVE);
    public static final Option<Path> UPSTREAM_CA = Option.withoutDefault("--upstream-ca", "FILE",
            "authorities (PEM) trusted for https:// and kafkas:// upstreams, instead of the JDK's trust store",
            "none: the JDK's", TlsFiles::readableFile, Role.RELAY);
    public static final Option<Path> UPSTREAM_CLIENT_CERT = Option.withoutDefault("--upstream-client-cert", "FILE",
            "certificate chain (PEM) the relay presents to https:// and kafkas:// upstreams that ask for one; with"
                    + " --upstream-client-key", "none", TlsFiles::readableFile, Role.RELAY);
    public static final Option<Path> UPSTREAM_CLIENT_KEY = Option.withoutDefault("--upstream-client-key", "FILE",
            "the private key of --upstream-client-cert (PEM)", "none", TlsFiles::readableFile, Role.RELAY);
    public static final Option<Long> QUOTA_PER_MINUTE = Option.of("--quota-per-minute", "N",
            "collector: ingest requests this replica takes per minute, past it 429; 0 for no quota", "0",
            text -> IngestAccess.checkQuota(OptionValues.wholeNumber(text)), Role.SERVE);
    public static final Option<Duration> LEASE_PASS_SECONDS = Option.of("--lease-pass-seconds", "N",
            "collector: how often the lease holder renews it (it expires three passes later) and the other replicas"
                    + " try to take it; 1 to " + StoreUpkeep.MAX_LEASE_PASS_SECONDS, "10",
            text -> StoreUpkeep.checkLeasePass(OptionValues.wholeNumber(text)), Role.SERVE);
    public static final Option<Duration> DEDUP_WINDOW = Option.of("--dedup-window", "DURATION",
            "collector: how long an idempotency key is remembered; a re-send later than this is stored again; 1m"
                    + " to " + DurationText.format(StoreUpkeep.MAX_WINDOW), "7d",
            text -> StoreUpkeep.checkWindow(DurationText.parse(text)), Role.SERVE);
    public static final Option<Duration> RETENTION = Option.withoutDefault("--retention", "DURATION",
            "collector: archived batches older than this (e.g. 90d) are deleted; 1m to "
                    + DurationText.format(StoreUpkeep.MAX_WINDOW), "none: kept for ever",
            text -> StoreUpkeep.checkWindow(DurationText.parse(text)), Role.SERVE);
    public static final Option<URI> SOURCE = Option.withoutDefault("--source", "URL",
            "collector: a Kafka topic (kafka://HOST:PORT[,HOST:PORT]/TOPIC) to consume and archive too, as a member of"
                    + " --source-group", "none", SourceTopic::parseSource, Role.SERVE);
    public static final Option<String> SOURCE_GROUP = Option.of("--source-group", "NAME",
            "collector: the Kafka consumer group --source is read as; the collectors of one store share it",
            "mcpd-serve", SourceTopic::checkGroup, Role.SERVE);
    public static final Option<Path> ROUTES = Option.withoutDefault("--routes", "DIR",
            "a directory of *.camel.yaml routes loaded beside the built-in ones (extension points:"
                    + " direct:mcpd-before-spool, direct:mcpd-after-delivery)", "none",
            text -> OptionValues.existingDirectory(OptionValues.parseDirectory(text)), Role.RELAY, Role.SERVE);

    /** Every option, in the order help and docs/command-line.md list them. */
    public static final List<Option<?>> ALL = List.of(LISTEN, DATA, SPOOL_DIR, UPSTREAM, INGEST_KEY, UPSTREAM_KEY,
            SPOOL_MAX_BYTES, MAX_BODY_BYTES, REQUEST_TIMEOUT_SECONDS, WORKERS, MAX_IN_FLIGHT, ORDERED_PATH,
            FORWARD_HEADER, BATCH_MAX_ENTRIES,
            BATCH_MAX_BYTES, PROBE_PATH, UPSTREAM_PROBE, PROBE_INTERVAL_SECONDS, PROBE_TIMEOUT_SECONDS, HEALTHY_THRESHOLD,
            UNHEALTHY_THRESHOLD, RETRYABLE_STATUS, SPOOL_MAX_AGE, TLS_CERT, TLS_KEY, TLS_CLIENT_CA, UPSTREAM_CA,
            UPSTREAM_CLIENT_CERT, UPSTREAM_CLIENT_KEY, QUOTA_PER_MINUTE, LEASE_PASS_SECONDS, DEDUP_WINDOW, RETENTION, SOURCE, SOURCE_GROUP,
            ROUTES);

    private Options() {
    }

    /** The options a role takes, in order. */
    public static List<Option<?>> of(Role role) {
        return ALL.stream().filter(option -> option.takenBy(role)).toList();
    }

    /** The option table of docs/command-line.md (Markdown), made from the declarations; a test holds the page to it. */
    public static String markdownTable() {
        StringBuilder table = new StringBuilder("| option | env | default | roles | meaning |\n|---|---|---|---|---|\n");
        for (Option<?> option : ALL) {
            table.append("| `").append(option.flag()).append(' ').append(option.label()).append('`')
                    .append(option.repeatable() ? " (repeatable, in order)" : "")
                    .append(" | `").append(option.environmentVariable()).append('`')
                    .append(option.repeatable() ? " (comma-separated)" : "")
                    .append(" | ").append(option.defaultText().map(Options::markdownDefault).orElse("none"))
                    .append(" | ").append(option.roles().stream().sorted()
                            .map(role -> role.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", ")))
                    .append(" | ").append(option.meaning().replace("|", "\\|")).append(" |\n");
        }
        return table.toString();
    }

    /** {@code 1GiB} → `1GiB`; {@code 0 (no quota)} → `0` (no quota); {@code none (open)} stays words. */
    private static String markdownDefault(String text) {
        if (text.startsWith("none")) {
            return text;
        }
        int note = text.indexOf(" (");
        return note < 0 ? "`" + text + "`" : "`" + text.substring(0, note) + "`" + text.substring(note);
    }
}
