package dev.mcpd.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Everything one mcpd process is configured with, typed and validated.
 *
 * <p>Every instance is valid: the canonical constructor checks each value, so a component that is handed
 * a config never checks it again. {@link #from(Map, Map)} builds one from command-line flags and
 * environment variables, with the command line's precedence (flag, then variable, then default) and errors that
 * name the flag or variable the bad value came from. Nothing else in mcpd reads flags or the environment. Each
 * option is declared once, in {@link Options}.
 *
 * @param listen         ingest, probes and metrics address ({@code --listen})
 * @param data           the collector store: a file path (embedded SQLite) or a {@code postgres://} URL;
 *                       for the relay it only places the spool ({@code --data})
 * @param spoolDir       where spools live; the relay spools in {@link #relaySpoolDir()} ({@code --spool-dir})
 * @param upstreams      collectors to deliver to, primary first ({@code --upstream})
 * @param ingestKey      key a sender must present; empty means open ({@code --ingest-key})
 * @param upstreamKey    key the relay presents to every upstream; empty means each sender's own key is
 *                       passed on ({@code --upstream-key})
 * @param spoolMaxBytes  spool bound ({@code --spool-max-bytes})
 * @param maxBodyBytes   larger request bodies get 413 ({@code --max-body-bytes})
 * @param requestTimeout a request not fully read in time gets 408 ({@code --request-timeout-seconds})
 * @param workers        delivery lanes ({@code --workers})
 * @param maxInFlight    the most requests in flight to one upstream at once ({@code --max-in-flight})
 * @param batchMaxEntries the most entries in one relay batch or merged OTLP request; 1 sends every entry alone
 *                        ({@code --batch-max-entries})
 * @param batchMaxBytes  the most body bytes in one relay batch ({@code --batch-max-bytes})
 * @param probePath      the path every upstream is checked with ({@code --probe-path})
 * @param upstreamProbes where some upstreams are checked instead, or that they are not ({@code --upstream-probe})
 * @param probeInterval  time between checks of one upstream ({@code --probe-interval-seconds})
 * @param probeTimeout   a check answered later fails ({@code --probe-timeout-seconds}); shorter than the interval
 * @param healthyThreshold   successful checks in a row that bring an upstream back ({@code --healthy-threshold})
 * @param unhealthyThreshold failed checks in a row that take it out of service ({@code --unhealthy-threshold})
 * @param retryableStatuses 4xx statuses retried like a 5xx rather than dead-lettered ({@code --retryable-status})
 * @param spoolMaxAge    an entry waiting longer moves to dead/ as expired; empty: nothing expires
 *                       ({@code --spool-max-age})
 * @param tls            the PEM files of the listener's HTTPS and of the relay's TLS to its upstreams
 * @param quotaPerMinute the collector's per-replica cap on ingest requests per minute; 0 for none
 *                       ({@code --quota-per-minute})
 * @param upkeep         the collector's lease and what runs under it: key and archive retention
 * @param source         the Kafka topic the collector consumes too, if any
 * @param routes         a directory whose {@code *.camel.yaml} routes are loaded beside the built-in ones
 *                       ({@code --routes})
 */
public record McpdConfig(
        ListenAddress listen,
        String data,
        Path spoolDir,
        List<URI> upstreams,
        Optional<Secret> ingestKey,
        Optional<Secret> upstreamKey,
        long spoolMaxBytes,
        long maxBodyBytes,
        Duration requestTimeout,
        int workers,
        int maxInFlight,
        int batchMaxEntries,
        long batchMaxBytes,
        String probePath,
        List<UpstreamProbeAddress> upstreamProbes,
        Duration probeInterval,
        Duration probeTimeout,
        int healthyThreshold,
        int unhealthyThreshold,
        Set<Integer> retryableStatuses,
        Optional<Duration> spoolMaxAge,
        TlsFiles tls,
        long quotaPerMinute,
        StoreUpkeep upkeep,
        SourceTopic source,
        Optional<Path> routes) {

    /** Checks further apart than an hour would leave a dead upstream in service for hours. */
    public static final long MAX_PROBE_SECONDS = 3_600;
    /** More checks in a row than this would take an upstream out (or bring it back) only after hours. */
    public static final int MAX_THRESHOLD = 100;
    private static final Pattern PROBE_PATH_FORM = Pattern.compile("/[\\x21-\\x7e]{0,1023}");

    /** More workers than this buys nothing over one network link and only hides a wrong value. */
    public static final int MAX_WORKERS = 1024;
    /** A window past this would hold more connections (HTTP/1.1) than a process should open to one upstream. */
    public static final int MAX_IN_FLIGHT = 65_536;
    /** The most entries the relay-batch framing carries. */
    public static final int MAX_BATCH_ENTRIES = 65_536;
    /** A day: longer is surely a mistake, and keeps the timeout safe to convert to milliseconds. */
    public static final long MAX_REQUEST_TIMEOUT_SECONDS = 86_400;

    private static final Pattern POSTGRES = Pattern.compile("(?i)postgres(ql)?://.*");
    private static final Pattern WHOLE_NUMBER = Pattern.compile("\\d+");
    private static final int SECTION_WIDTH = 16;

    /** Checks every value; a bad one is a {@link ConfigException} naming the option and its variable. */
    public McpdConfig {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(spoolDir, "spoolDir");
        Objects.requireNonNull(upstreams, "upstreams");
        Objects.requireNonNull(ingestKey, "ingestKey");
        Objects.requireNonNull(upstreamKey, "upstreamKey");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(routes, "routes");
        Objects.requireNonNull(upkeep, "upkeep");
        Objects.requireNonNull(source, "source");
        check(Options.DATA, () -> checkData(data));
        for (URI upstream : upstreams) {
            check(Options.UPSTREAM, () -> checkUpstream(upstream));
        }
        check(Options.SPOOL_MAX_BYTES, () -> atLeastOneByte(spoolMaxBytes));
        check(Options.MAX_BODY_BYTES, () -> checkMaxBodyBytesFits(checkMaxBodyBytes(maxBodyBytes),
                Runtime.getRuntime().maxMemory()));
        check(Options.REQUEST_TIMEOUT_SECONDS, () -> checkRequestTimeout(requestTimeout));
        check(Options.WORKERS, () -> checkWorkers(workers));
        check(Options.MAX_IN_FLIGHT, () -> checkMaxInFlight(maxInFlight));
        check(Options.BATCH_MAX_ENTRIES, () -> checkBatchMaxEntries(batchMaxEntries));
        check(Options.BATCH_MAX_BYTES, () -> atLeastOneByte(batchMaxBytes));
        Objects.requireNonNull(probePath, "probePath");
        Objects.requireNonNull(probeInterval, "probeInterval");
        Objects.requireNonNull(probeTimeout, "probeTimeout");
        check(Options.PROBE_PATH, () -> checkProbePath(probePath));
        Objects.requireNonNull(upstreamProbes, "upstreamProbes");
        List<UpstreamProbeAddress> probes = upstreamProbes;
        int upstreamCount = upstreams.size();
        check(Options.UPSTREAM_PROBE, () -> checkUpstreamProbes(probes, upstreamCount));
        check(Options.PROBE_INTERVAL_SECONDS, () -> checkProbeSeconds(probeInterval.toSeconds()));
        check(Options.PROBE_TIMEOUT_SECONDS, () -> checkProbeSeconds(probeTimeout.toSeconds()));
        check(Options.PROBE_TIMEOUT_SECONDS, () -> checkProbeTimeout(probeTimeout, probeInterval));
        check(Options.HEALTHY_THRESHOLD, () -> checkThreshold(healthyThreshold));
        check(Options.UNHEALTHY_THRESHOLD, () -> checkThreshold(unhealthyThreshold));
        Objects.requireNonNull(retryableStatuses, "retryableStatuses");
        Objects.requireNonNull(spoolMaxAge, "spoolMaxAge");
        Objects.requireNonNull(tls, "tls");
        for (int status : retryableStatuses) {
            check(Options.RETRYABLE_STATUS, () -> checkRetryableStatus(status));
        }
        spoolMaxAge.ifPresent(age -> check(Options.SPOOL_MAX_AGE, () -> checkSpoolMaxAge(age)));
        check(Options.QUOTA_PER_MINUTE, () -> checkQuota(quotaPerMinute));
        routes.ifPresent(dir -> check(Options.ROUTES, () -> existingDirectory(dir)));
        // Copied last: reassigning the parameter earlier would stop the lambdas above from capturing it.
        upstreams = List.copyOf(upstreams);
        upstreamProbes = List.copyOf(upstreamProbes);
        retryableStatuses = Collections.unmodifiableSet(new TreeSet<>(retryableStatuses));
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
        Sources given = new Sources(flags, environment);
        String data = given.value(Options.DATA);
        return new McpdConfig(
                given.value(Options.LISTEN),
                data,
                given.single(Options.SPOOL_DIR).orElseGet(() -> defaultSpoolDir(data)),
                given.list(Options.UPSTREAM),
                given.single(Options.INGEST_KEY),
                given.single(Options.UPSTREAM_KEY),
                given.value(Options.SPOOL_MAX_BYTES),
                given.value(Options.MAX_BODY_BYTES),
                given.value(Options.REQUEST_TIMEOUT_SECONDS),
                given.value(Options.WORKERS),
                given.value(Options.MAX_IN_FLIGHT),
                given.value(Options.BATCH_MAX_ENTRIES),
                given.value(Options.BATCH_MAX_BYTES),
                given.value(Options.PROBE_PATH),
                given.list(Options.UPSTREAM_PROBE),
                given.value(Options.PROBE_INTERVAL_SECONDS),
                given.value(Options.PROBE_TIMEOUT_SECONDS),
                given.value(Options.HEALTHY_THRESHOLD),
                given.value(Options.UNHEALTHY_THRESHOLD),
                given.single(Options.RETRYABLE_STATUS).orElse(Set.of()),
                given.single(Options.SPOOL_MAX_AGE),
                new TlsFiles(given.single(Options.TLS_CERT), given.single(Options.TLS_KEY),
                        given.single(Options.TLS_CLIENT_CA), given.single(Options.UPSTREAM_CA),
                        given.single(Options.UPSTREAM_CLIENT_CERT), given.single(Options.UPSTREAM_CLIENT_KEY)),
                given.value(Options.QUOTA_PER_MINUTE),
                new StoreUpkeep(given.value(Options.LEASE_PASS_SECONDS), given.value(Options.DEDUP_WINDOW),
                        given.single(Options.RETENTION)),
                new SourceTopic(given.single(Options.SOURCE), given.value(Options.SOURCE_GROUP)),
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

    /** Where the relay spools: {@code <spool-dir>/relay}. */
    public Path relaySpoolDir() {
        return spoolDir.resolve("relay");
    }

    /** Whether the store is PostgreSQL ({@code postgres://} or {@code postgresql://}) rather than a SQLite file. */
    public boolean usesPostgres() {
        return isPostgres(data);
    }

    /**
     * What {@code mcpd config} prints: one line per section ({@code listen}, {@code ingest}, {@code store},
     * {@code relay}, {@code delivery}), the name padded to 16 columns. No key, password or URL userinfo
     * appears in it.
     */
    public List<String> describe() {
        return List.of(
                section("listen", listen + "; bodies up to " + ByteSize.format(maxBodyBytes)
                        + ", read within " + requestTimeout.toSeconds() + " s"),
                section("ingest", (ingestKey.isPresent()
                        ? "sender key required (--ingest-key)"
                        : "open: no sender key required")
                        + (quotaPerMinute > 0 ? "; collector quota " + quotaPerMinute + " requests/min per replica"
                                : "")),
                section("store", usesPostgres()
                        ? redact(data) + " (PostgreSQL)"
                        : data + " (embedded SQLite)"),
                section("upkeep", upkeep.describe()),
                section("source", source.describe()),
                section("relay", describeUpstreams() + "; "
                        + (upstreamKey.isPresent()
                                ? "upstream key presented to every upstream"
                                : "each sender's key passed on")
                        + "; spool at " + relaySpoolDir() + ", " + ByteSize.format(spoolMaxBytes)),
                section("delivery", workers + (workers == 1 ? " worker" : " workers") + "; up to " + maxInFlight
                        + " in flight per upstream; " + (batchMaxEntries == 1 ? "no batches or merges"
                        : "batches and OTLP merges of up to " + batchMaxEntries + " entries, "
                        + ByteSize.format(batchMaxBytes))),
                section("health", "GET " + probePath + " every " + probeInterval.toSeconds() + " s, "
                        + probeTimeout.toSeconds() + " s timeout; out of service after " + unhealthyThreshold
                        + " failed checks in a row, back after " + healthyThreshold + " successful ones"
                        + upstreamProbes.stream().map(probe -> "; " + probe.describe()).collect(Collectors.joining())),
                section("dead letters", "4xx answers (but " + retriedClientErrors() + ") kept in "
                        + relaySpoolDir().resolve("dead") + "; " + spoolMaxAge.map(age -> "entries waiting over "
                                + DurationText.format(age) + " expire into it").orElse("nothing expires")),
                section("tls", tls.describe()),
                section("routes", routes.map(dir -> "built-in and " + dir + "/*.camel.yaml")
                        .orElse("built-in only")));
    }

    /** The 4xx statuses retried rather than dead-lettered: 408, 429 and {@code --retryable-status}, in order. */
    private String retriedClientErrors() {
        TreeSet<Integer> retried = new TreeSet<>(retryableStatuses);
        retried.add(408);
        retried.add(429);
        return retried.stream().map(String::valueOf).collect(Collectors.joining(", "));
    }

    /** Like {@link #describe()}: a record's default text would show the password of a PostgreSQL URL. */
    @Override
    public String toString() {
        return "McpdConfig" + describe().stream()
                .map(line -> line.replaceAll(" {2,}", ": "))
                .collect(Collectors.joining("; ", "[", "]"));
    }

    private String describeUpstreams() {
        if (upstreams.isEmpty()) {
            return "no upstream (name one with --upstream or MCPD_UPSTREAMS)";
        }
        return upstreams.size() + " upstream(s) in order, " + upstreams.stream()
                .map(upstream -> redact(upstream.toString()))
                .collect(Collectors.joining(", "));
    }

    private static String section(String name, String text) {
        return String.format(Locale.ROOT, "%-" + SECTION_WIDTH + "s%s", name, text);
    }

    // ---- values: each check returns the value or throws IllegalArgumentException saying what is wrong

    static String checkData(String data) {
        if (data.isBlank()) {
            throw new IllegalArgumentException("the value is empty: name a file or a postgres:// URL");
        }
        if (isPostgres(data)) {
            URI uri = parseUri(data, "is not a postgres:// URL");
            if (uri.getHost() == null) {
                throw new IllegalArgumentException("\"" + redact(data) + "\" is not a postgres:// URL: it names no host");
            }
            return data;
        }
        Path file = parsePath(data);
        if (file.getFileName() == null) {
            throw new IllegalArgumentException("\"" + data + "\" names no file");
        }
        return data;
    }

    static Path existingDirectory(Path dir) {
        if (!java.nio.file.Files.isDirectory(dir)) {
            throw new IllegalArgumentException("\"" + dir + "\" is not a directory");
        }
        return dir;
    }

    static Path parseDirectory(String text) {
        if (text.isBlank()) {
            throw new IllegalArgumentException("the value is empty: name a directory");
        }
        return parsePath(text);
    }

    private static Path parsePath(String text) {
        try {
            return Path.of(text);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("\"" + text + "\" is not a path: " + e.getReason());
        }
    }

    /** Each names an upstream there is, at most once. */
    static List<UpstreamProbeAddress> checkUpstreamProbes(List<UpstreamProbeAddress> probes, int upstreams) {
        Set<Integer> named = new java.util.HashSet<>();
        for (UpstreamProbeAddress probe : probes) {
            if (probe.order() > upstreams) {
                throw new IllegalArgumentException("upstream " + probe.order() + " does not exist: there "
                        + (upstreams == 1 ? "is 1 --upstream" : "are " + upstreams + " --upstream"));
            }
            if (!named.add(probe.order())) {
                throw new IllegalArgumentException("upstream " + probe.order() + " is named twice");
            }
        }
        return probes;
    }

    static URI parseUpstream(String text) {
        return checkUpstream(parseUri(text.strip(), "is not an upstream URL"));
    }

    static URI checkUpstream(URI upstream) {
        if (KafkaAddress.isKafka(upstream)) {
            KafkaAddress.parse(upstream); // its own one-line reasons
            return upstream;
        }
        if (!isHttp(upstream)) {
            throw new IllegalArgumentException("\"" + redact(upstream.toString())
                    + "\" is not an upstream URL: use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC");
        }
        return checkHttpUpstream(upstream);
    }

    /** An address to check an upstream at ({@code --upstream-probe}): HTTP only. */
    static URI parseProbeAddress(String text) {
        URI address = parseUri(text.strip(), "is not an upstream URL");
        if (!isHttp(address)) {
            throw new IllegalArgumentException("\"" + redact(address.toString())
                    + "\" is not an upstream URL: use http://HOST:PORT or https://HOST:PORT");
        }
        return checkHttpUpstream(address);
    }

    private static boolean isHttp(URI upstream) {
        String scheme = upstream.getScheme() == null ? "" : upstream.getScheme().toLowerCase(Locale.ROOT);
        return upstream.isAbsolute() && (scheme.equals("http") || scheme.equals("https"));
    }

    private static URI checkHttpUpstream(URI upstream) {
        if (upstream.getHost() == null) {
            // java.net.URI finds no host in names with '_' (common for Compose services); nor would the HTTP client.
            throw new IllegalArgumentException("\"" + redact(upstream.toString())
                    + "\" is not an upstream URL: it names no host (host names may use letters, digits, '-' and '.')");
        }
        if (upstream.getRawUserInfo() != null) {
            // The HTTP client refuses such URLs, and a key in a URL ends up in `ps` and shell history.
            throw new IllegalArgumentException("\"" + redact(upstream.toString())
                    + "\" carries a user or password: give the relay's key with --upstream-key instead");
        }
        if (upstream.getRawQuery() != null || upstream.getRawFragment() != null) {
            // A query would be shown in metric labels, /relay/status and /readyz (a token in it would leak there),
            // and a request's own path and query go after the upstream's path: there is no place for a second one.
            throw new IllegalArgumentException("\"" + redact(upstream.toString()) + "\" carries a query or fragment:"
                    + " an upstream URL is scheme, host, port and path; give the relay's key with --upstream-key");
        }
        return upstream;
    }

    private static URI parseUri(String text, String notWhat) {
        try {
            return new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("\"" + redact(text) + "\" " + notWhat);
        }
    }

    /** The most one request body may be: a body is held in memory whole, and a spool record holds at most 2 GiB. */
    public static final long MAX_BODY_CEILING = ByteSize.GIB;

    static long checkMaxBodyBytes(long bytes) {
        atLeastOneByte(bytes);
        if (bytes > MAX_BODY_CEILING) {
            throw new IllegalArgumentException(ByteSize.format(bytes) + " is more than a body can be: at most "
                    + ByteSize.format(MAX_BODY_CEILING) + " (a body is held in memory whole)");
        }
        return bytes;
    }

    /**
     * Bodies in memory may take a quarter of the heap (one body always may): a body larger than that quarter
     * would only be taken when no other is read, or not at all.
     */
    static long checkMaxBodyBytesFits(long bytes, long maxHeap) {
        if (bytes > maxHeap / 4) {
            throw new IllegalArgumentException(ByteSize.format(bytes) + " does not fit this process's heap of "
                    + maxHeap / ByteSize.MIB + " MiB: bodies may take a quarter of it; give it at least 4 × the body"
                    + " (MCPD_HEAP) or lower the limit");
        }
        return bytes;
    }

    static long atLeastOneByte(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException(bytes + " bytes is too small: use at least 1 byte");
        }
        return bytes;
    }

    static Duration checkRequestTimeout(Duration timeout) {
        if (timeout.compareTo(Duration.ofSeconds(1)) < 0
                || timeout.compareTo(Duration.ofSeconds(MAX_REQUEST_TIMEOUT_SECONDS)) > 0) {
            throw new IllegalArgumentException(timeout.toSeconds() + " seconds is out of range: use 1 to "
                    + MAX_REQUEST_TIMEOUT_SECONDS);
        }
        return timeout;
    }

    /** Upper bound of --spool-max-age: a year; longer is surely a slip of the unit. */
    public static final Duration MAX_SPOOL_AGE = Duration.ofDays(366);

    static Set<Integer> parseRetryableStatuses(String text) {
        Set<Integer> statuses = new TreeSet<>();
        for (String code : text.split(",")) {
            if (code.isBlank()) {
                continue; // a trailing comma is a slip, not a value
            }
            String digits = code.strip();
            if (!digits.matches("[0-9]{3}")) {
                throw new IllegalArgumentException("\"" + digits + "\" is not an HTTP status: list 4xx codes such as 409,425");
            }
            statuses.add(checkRetryableStatus(Integer.parseInt(digits)));
        }
        if (statuses.isEmpty()) {
            throw new IllegalArgumentException("the list is empty: name 4xx codes such as 409,425");
        }
        return statuses;
    }

    static int checkRetryableStatus(int status) {
        if (status < 400 || status > 499) {
            throw new IllegalArgumentException(status + " is not a 4xx status: 5xx, timeouts and refused connections"
                    + " are always retried; only 4xx can be named");
        }
        if (status == 408 || status == 429) {
            throw new IllegalArgumentException(status + " is always retried already: name other 4xx codes");
        }
        return status;
    }

    static Duration checkSpoolMaxAge(Duration age) {
        if (age.compareTo(Duration.ofSeconds(1)) < 0 || age.compareTo(MAX_SPOOL_AGE) > 0) {
            throw new IllegalArgumentException(DurationText.format(age) + " is out of range: use 1s to 366d");
        }
        return age;
    }

    static long checkQuota(long quota) {
        if (quota < 0) {
            throw new IllegalArgumentException(quota + " is not a quota: use a whole number of requests per minute,"
                    + " or 0 for none");
        }
        return quota;
    }

    static int checkMaxInFlight(long maxInFlight) {
        if (maxInFlight < 1 || maxInFlight > MAX_IN_FLIGHT) {
            throw new IllegalArgumentException(maxInFlight + " is out of range: use 1 to " + MAX_IN_FLIGHT);
        }
        return (int) maxInFlight;
    }

    static int checkBatchMaxEntries(long entries) {
        if (entries < 1 || entries > MAX_BATCH_ENTRIES) {
            throw new IllegalArgumentException(entries + " is out of range: use 1 (no batches) to " + MAX_BATCH_ENTRIES);
        }
        return (int) entries;
    }

    static String checkProbePath(String path) {
        String stripped = path.strip();
        if (!PROBE_PATH_FORM.matcher(stripped).matches()) {
            throw new IllegalArgumentException("\"" + path + "\" is not a path: it starts with / and holds visible"
                    + " ASCII characters only (at most 1024)");
        }
        return stripped;
    }

    static Duration checkProbeSeconds(long seconds) {
        if (seconds < 1 || seconds > MAX_PROBE_SECONDS) {
            throw new IllegalArgumentException(seconds + " seconds is out of range: use 1 to " + MAX_PROBE_SECONDS);
        }
        return Duration.ofSeconds(seconds);
    }

    static Duration checkProbeTimeout(Duration timeout, Duration interval) {
        if (timeout.compareTo(interval) >= 0) {
            throw new IllegalArgumentException(timeout.toSeconds() + " seconds is not shorter than"
                    + " --probe-interval-seconds (" + interval.toSeconds() + "): a check must end before the next");
        }
        return timeout;
    }

    static int checkThreshold(long checks) {
        if (checks < 1 || checks > MAX_THRESHOLD) {
            throw new IllegalArgumentException(checks + " checks is out of range: use 1 to " + MAX_THRESHOLD);
        }
        return (int) checks;
    }

    static int checkWorkers(long workers) {
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new IllegalArgumentException(workers + " workers is out of range: use 1 to " + MAX_WORKERS);
        }
        return (int) workers;
    }

    static long wholeNumber(String text) {
        String digits = text.strip();
        if (!WHOLE_NUMBER.matcher(digits).matches()) {
            throw new IllegalArgumentException("\"" + text + "\" is not a whole number");
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException tooManyDigits) {
            throw new IllegalArgumentException("\"" + text + "\" is too large");
        }
    }

    private static boolean isPostgres(String data) {
        return POSTGRES.matcher(data).matches();
    }

    /**
     * A URL fit to print: the password of {@code user:password@} becomes {@code ***}, a userinfo without a
     * password (often a token) becomes {@code ***} entirely, and so does any query parameter whose name
     * says it holds a password, key, token or secret (libpq accepts {@code ?password=}).
     */
    static String redact(String url) {
        return url
                .replaceFirst("^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@:]*):[^/?#@]*@", "$1$2:***@")
                .replaceFirst("^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@:]+@", "$1***@")
                .replaceAll("(?i)([?&][^=&#]*(?:pass|key|token|secret)[^=&#]*=)[^&#]*", "$1***");
    }

    /** Runs a check of a value given in code: the error names the option and its variable. */
    static <T> T check(Option<?> option, Supplier<T> value) {
        return check(option.flag() + " (" + option.environmentVariable() + ")", value);
    }

    /** Runs a check; a failure becomes a ConfigException naming {@code what} was given the bad value. */
    private static <T> T check(String what, Supplier<T> value) {
        try {
            return value.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException("invalid value for " + what + ": " + e.getMessage());
        }
    }

    /**
     * The raw text of each option, with the command line's precedence applied, parsed so that an error names the
     * flag or the environment variable the text came from.
     */
    private static final class Sources {
        private final Map<Option<?>, List<String>> flags;
        private final Map<String, String> environment;

        Sources(Map<Option<?>, List<String>> flags, Map<String, String> environment) {
            this.flags = flags;
            this.environment = environment;
        }

        /** What was given, or the option's default value. */
        <T> T value(Option<T> option) {
            return single(option).orElseGet(() -> option.defaultValue().orElseThrow());
        }

        <T> Optional<T> single(Option<T> option) {
            List<String> values = flags.getOrDefault(option, List.of());
            if (!values.isEmpty()) {
                String last = values.get(values.size() - 1);
                return Optional.of(fromFlag(option, () -> option.parse(last)));
            }
            return variable(option).map(text -> fromVariable(option, () -> option.parse(text)));
        }

        <T> List<T> list(Option<T> option) {
            List<String> values = flags.getOrDefault(option, List.of());
            List<T> parsed = new ArrayList<>();
            if (!values.isEmpty()) {
                for (String text : values) {
                    parsed.add(fromFlag(option, () -> option.parse(text)));
                }
                return parsed;
            }
            for (String text : option.splitList(variable(option).orElse(""))) {
                // Blank entries (a trailing comma, "a,,b") are slips, not values.
                if (!text.isBlank()) {
                    parsed.add(fromVariable(option, () -> option.parse(text)));
                }
            }
            return parsed;
        }

        private Optional<String> variable(Option<?> option) {
            String text = environment.get(option.environmentVariable());
            return text == null || text.isBlank() ? Optional.empty() : Optional.of(text);
        }

        private static <T> T fromFlag(Option<?> option, Supplier<T> value) {
            return check(option.flag(), value);
        }

        private static <T> T fromVariable(Option<?> option, Supplier<T> value) {
            return check(option.flag() + " (environment variable " + option.environmentVariable() + ")", value);
        }
    }
}
