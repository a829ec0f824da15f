package dev.mcpd.config;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Everything one mcpd process is configured with, typed and validated, in the sections {@code mcpd config} prints
 * one line each.
 *
 * <p>Every instance is valid: each section's constructor checks its values, so a component that is handed a
 * config never checks it again. {@link #from(Map, Map)} builds one from command-line flags and environment variables,
 * with the command line's precedence (flag, then variable, then default) and errors that name the flag or variable
 * the bad value came from ({@link ConfigSources}). Nothing else in mcpd reads flags or the environment. Each option is
 * declared once, in {@link Options}.
 *
 * @param listener    where it listens and what it reads of a request ({@code listen})
 * @param ingest      who may send, and how much ({@code ingest})
 * @param data        the collector store: a file path (embedded SQLite) or a {@code postgres://} URL; for the relay it
 *                    only places the spool ({@code --data}; {@code store})
 * @param upkeep      the collector's lease and what runs under it: key and archive retention ({@code upkeep})
 * @param source      the Kafka topic the collector consumes too, if any ({@code source})
 * @param relay       the relay's upstreams, its key for them, its spool ({@code relay})
 * @param delivery    the relay's delivery lanes, windows and batches ({@code delivery})
 * @param streams     which entries travel in order, and which sender headers travel with them ({@code streams})
 * @param health      how the relay checks its upstreams ({@code health})
 * @param deadLetters what goes to dead/ rather than being sent again ({@code dead letters})
 * @param tls         the PEM files of the listener's HTTPS and of the relay's TLS to its upstreams ({@code tls})
 * @param routes      a directory whose {@code *.camel.yaml} routes are loaded beside the built-in ones
 *                    ({@code --routes}; {@code routes})
 */
public record McpdConfig(
        Listener listener,
        IngestAccess ingest,
        String data,
        StoreUpkeep upkeep,
        SourceTopic source,
        Relaying relay,
        DeliveryLanes delivery,
        Streams streams,
        HealthChecks health,
        DeadLetterPolicy deadLetters,
        TlsFiles tls,
        Optional<Path> routes) {

    private static final Pattern POSTGRES = Pattern.compile("(?i)postgres(ql)?://.*");
    private static final int SECTION_WIDTH = 16;

    /** Checks what no section can alone; a bad value is a {@link ConfigException} naming the option. */
    public McpdConfig {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(ingest, "ingest");
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(upkeep, "upkeep");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(relay, "relay");
        Objects.requireNonNull(delivery, "delivery");
        Objects.requireNonNull(streams, "streams");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(deadLetters, "deadLetters");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(routes, "routes");
        String store = data;
        OptionValues.check(Options.DATA, () -> checkData(store));
        health.checkUpstreamProbes(relay.upstreams().size());
        routes.ifPresent(dir -> OptionValues.check(Options.ROUTES, () -> OptionValues.existingDirectory(dir)));
    }

    /**
     * The configuration given by command-line flags and environment variables.
     *
     * <p>A flag beats its variable; any {@code --upstream} flag replaces the whole {@code MCPD_UPSTREAMS}
     * list; an empty variable counts as unset. A single-valued option given several times keeps its last
     * value.
     *
     * @param flags       the values of each flag, in the order written on the command line
     * @param environment the process environment (injected so tests need not set real variables)
     * @throws ConfigException naming the flag or variable of the first bad value
     */
    public static McpdConfig from(Map<Option<?>, List<String>> flags, Map<String, String> environment) {
        ConfigSources given = new ConfigSources(flags, environment);
        String data = given.value(Options.DATA);
        return new McpdConfig(
                new Listener(given.value(Options.LISTEN), given.value(Options.MAX_BODY_BYTES),
                        given.value(Options.REQUEST_TIMEOUT_SECONDS)),
                new IngestAccess(given.single(Options.INGEST_KEY), given.value(Options.QUOTA_PER_MINUTE)),
                data,
                new StoreUpkeep(given.value(Options.LEASE_PASS_SECONDS), given.value(Options.DEDUP_WINDOW),
                        given.single(Options.RETENTION)),
                new SourceTopic(given.single(Options.SOURCE), given.value(Options.SOURCE_GROUP)),
                new Relaying(given.list(Options.UPSTREAM), given.single(Options.UPSTREAM_KEY),
                        given.single(Options.SPOOL_DIR).orElseGet(() -> defaultSpoolDir(data)),
                        given.value(Options.SPOOL_MAX_BYTES)),
                new DeliveryLanes(given.value(Options.WORKERS), given.value(Options.MAX_IN_FLIGHT),
                        given.value(Options.BATCH_MAX_ENTRIES), given.value(Options.BATCH_MAX_BYTES)),
                new Streams(given.list(Options.ORDERED_PATH), given.list(Options.FORWARD_HEADER)),
                new HealthChecks(given.value(Options.PROBE_PATH), given.list(Options.UPSTREAM_PROBE),
                        given.value(Options.PROBE_INTERVAL_SECONDS), given.value(Options.PROBE_TIMEOUT_SECONDS),
                        given.value(Options.HEALTHY_THRESHOLD), given.value(Options.UNHEALTHY_THRESHOLD)),
                new DeadLetterPolicy(given.single(Options.RETRYABLE_STATUS).orElse(Set.of()),
                        given.single(Options.SPOOL_MAX_AGE)),
                new TlsFiles(given.single(Options.TLS_CERT), given.single(Options.TLS_KEY),
                        given.single(Options.TLS_CLIENT_CA), given.single(Options.UPSTREAM_CA),
                        given.single(Options.UPSTREAM_CLIENT_CERT), given.single(Options.UPSTREAM_CLIENT_KEY)),
                given.single(Options.ROUTES));
    }

    /** The configuration given by environment variables alone (no flags): handy for tests. */
    public static McpdConfig fromEnvironment(Map<String, String> environment) {
        return from(Map.of(), environment);
    }

    /**
     * The spool directory when {@code --spool-dir} is not given: beside the data file, named after it
     * ({@code /data/mcpd.db} → {@code /data/mcpd.spool}); for a PostgreSQL store, which has no file,
     * beside the default data file ({@code ./data/mcpd.spool}).
     */
    public static Path defaultSpoolDir(String data) {
        checkData(data);
        Path file = Path.of(isPostgres(data) ? Options.DATA.defaultValue().orElseThrow() : data);
        String name = file.getFileName().toString();
        int lastDot = name.lastIndexOf('.');
        // A leading dot starts a hidden file's name, not an extension.
        String stem = lastDot > 0 ? name.substring(0, lastDot) : name;
        Path parent = file.getParent();
        return parent == null ? Path.of(stem + ".spool") : parent.resolve(stem + ".spool");
    }

    /** Whether the store is PostgreSQL ({@code postgres://} or {@code postgresql://}) rather than a SQLite file. */
    public boolean usesPostgres() {
        return isPostgres(data);
    }

    /**
     * What {@code mcpd config} prints: one line per section, the name padded to 16 columns. No key, password or URL
     * userinfo appears in it.
     */
    public List<String> describe() {
        return List.of(
                section("listen", listener.describe()),
                section("ingest", ingest.describe()),
                section("store", usesPostgres() ? OptionValues.redact(data) + " (PostgreSQL)"
                        : data + " (embedded SQLite)"),
                section("upkeep", upkeep.describe()),
                section("source", source.describe()),
                section("relay", relay.describe()),
                section("delivery", delivery.describe()),
                section("streams", streams.describe()),
                section("health", health.describe()),
                section("dead letters", deadLetters.describe(relay.relaySpoolDir().resolve("dead"))),
                section("tls", tls.describe()),
                section("routes", routes.map(dir -> "built-in and " + dir + "/*.camel.yaml")
                        .orElse("built-in only")));
    }

    /** Like {@link #describe()}: a record's default text would show the password of a PostgreSQL URL. */
    @Override
    public String toString() {
        return "McpdConfig" + describe().stream()
                .map(line -> line.replaceAll(" {2,}", ": "))
                .collect(Collectors.joining("; ", "[", "]"));
    }

    private static String section(String name, String text) {
        return String.format(Locale.ROOT, "%-" + SECTION_WIDTH + "s%s", name, text);
    }

    static String checkData(String data) {
        if (data.isBlank()) {
            throw new IllegalArgumentException("the value is empty: name a file or a postgres:// URL");
        }
        if (isPostgres(data)) {
            URI uri = OptionValues.parseUri(data, "is not a postgres:// URL");
            if (uri.getHost() == null) {
                throw new IllegalArgumentException("\"" + OptionValues.redact(data)
                        + "\" is not a postgres:// URL: it names no host");
            }
            return data;
        }
        Path file = OptionValues.parsePath(data);
        if (file.getFileName() == null) {
            throw new IllegalArgumentException("\"" + data + "\" names no file");
        }
        return data;
    }

    private static boolean isPostgres(String data) {
        return POSTGRES.matcher(data).matches();
    }
}
