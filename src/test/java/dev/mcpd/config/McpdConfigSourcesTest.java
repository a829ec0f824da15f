package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Where each value comes from — a flag, else its MCPD_ variable, else the default. */
class McpdConfigSourcesTest {

    @Test
    void nothingGivenMeansTheSpecDefaults() {
        McpdConfig config = McpdConfig.from(Map.of(), Map.of());
        assertEquals(new ListenAddress("0.0.0.0", 4317), config.listener().address());
        assertEquals("./data/mcpd.db", config.data());
        assertEquals(Path.of("./data/mcpd.spool"), config.relay().spoolDir());
        assertEquals(List.of(), config.relay().upstreams());
        assertEquals(Optional.empty(), config.ingest().key());
        assertEquals(Optional.empty(), config.relay().upstreamKey());
        assertEquals(1024L * 1024 * 1024, config.relay().spoolMaxBytes());
        assertEquals(16L * 1024 * 1024, config.listener().maxBodyBytes());
        assertEquals(Duration.ofSeconds(30), config.listener().requestTimeout());
        assertEquals(4, config.delivery().workers());
    }

    @Test
    void everyOptionReadsItsEnvironmentVariable() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of(
                "MCPD_LISTEN", "127.0.0.1:0",
                "MCPD_DATA", "/var/lib/mcpd/store.db",
                "MCPD_SPOOL_DIR", "/spool",
                "MCPD_UPSTREAMS", "http://a:4317,https://b:4318",
                "MCPD_INGEST_KEY", "in-key",
                "MCPD_UPSTREAM_KEY", "up-key",
                "MCPD_SPOOL_MAX_BYTES", "2GiB",
                "MCPD_MAX_BODY_BYTES", "1 MiB",
                "MCPD_REQUEST_TIMEOUT_SECONDS", "5",
                "MCPD_WORKERS", "8"));
        assertEquals(new ListenAddress("127.0.0.1", 0), config.listener().address());
        assertEquals("/var/lib/mcpd/store.db", config.data());
        assertEquals(Path.of("/spool"), config.relay().spoolDir());
        assertEquals(List.of(URI.create("http://a:4317"), URI.create("https://b:4318")), config.relay().upstreams());
        assertTrue(config.ingest().key().orElseThrow().matches("in-key"));
        assertEquals("up-key", config.relay().upstreamKey().orElseThrow().reveal());
        assertEquals(2L * 1024 * 1024 * 1024, config.relay().spoolMaxBytes());
        assertEquals(1024L * 1024, config.listener().maxBodyBytes());
        assertEquals(Duration.ofSeconds(5), config.listener().requestTimeout());
        assertEquals(8, config.delivery().workers());
    }

    @Test
    void flagBeatsEnvironmentVariable() {
        McpdConfig config = McpdConfig.from(
                Map.of(Options.WORKERS, List.of("2"), Options.LISTEN, List.of("127.0.0.1:9000")),
                Map.of("MCPD_WORKERS", "8", "MCPD_LISTEN", "0.0.0.0:1", "MCPD_DATA", "/env/mcpd.db"));
        assertEquals(2, config.delivery().workers());
        assertEquals(new ListenAddress("127.0.0.1", 9000), config.listener().address());
        assertEquals("/env/mcpd.db", config.data(), "a variable still counts where no flag is given");
    }

    @Test
    void anyUpstreamFlagReplacesTheWholeVariableList() {
        McpdConfig config = McpdConfig.from(
                Map.of(Options.UPSTREAM, List.of("http://flag:1")),
                Map.of("MCPD_UPSTREAMS", "http://env-a:1,http://env-b:1"));
        assertEquals(List.of(URI.create("http://flag:1")), config.relay().upstreams());
    }

    @Test
    void upstreamsKeepTheirOrder() {
        List<String> written = List.of("http://c:1", "http://a:1", "http://b:1");
        assertEquals(written.stream().map(URI::create).toList(),
                McpdConfig.from(Map.of(Options.UPSTREAM, written), Map.of()).relay().upstreams());
        assertEquals(written.stream().map(URI::create).toList(),
                McpdConfig.fromEnvironment(Map.of("MCPD_UPSTREAMS", String.join(",", written))).relay().upstreams());
    }

    @Test
    void upstreamListToleratesSpacesAndStrayCommas() {
        assertEquals(List.of(URI.create("http://a:1"), URI.create("http://b:1")),
                McpdConfig.fromEnvironment(Map.of("MCPD_UPSTREAMS", " http://a:1 ,, http://b:1,")).relay().upstreams());
    }

    @Test
    void emptyEnvironmentVariableCountsAsUnset() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of(
                "MCPD_WORKERS", "", "MCPD_UPSTREAMS", "", "MCPD_INGEST_KEY", "", "MCPD_LISTEN", " "));
        assertEquals(4, config.delivery().workers());
        assertEquals(List.of(), config.relay().upstreams());
        assertEquals(Optional.empty(), config.ingest().key());
        assertEquals(Options.LISTEN.defaultValue().orElseThrow(), config.listener().address());
    }

    @Test
    void lastOfARepeatedFlagWins() {
        assertEquals(3, McpdConfig.from(Map.of(Options.WORKERS, List.of("1", "3")), Map.of()).delivery().workers());
    }

    @Test
    void badFlagValueNamesTheFlag() {
        assertEquals("invalid value for --spool-max-bytes: \"-5\" is not a byte size: use a whole number of bytes,"
                        + " KiB, MiB or GiB (e.g. 16MiB)",
                fails(Map.of(Options.SPOOL_MAX_BYTES, List.of("-5")), Map.of()));
    }

    @Test
    void badEnvironmentValueNamesTheVariable() {
        assertEquals("invalid value for --spool-max-bytes (environment variable MCPD_SPOOL_MAX_BYTES): \"-5\" is"
                        + " not a byte size: use a whole number of bytes, KiB, MiB or GiB (e.g. 16MiB)",
                fails(Map.of(), Map.of("MCPD_SPOOL_MAX_BYTES", "-5")));
        assertEquals("invalid value for --upstream (environment variable MCPD_UPSTREAMS): \"ftp://x\" is not an"
                        + " upstream URL: use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC",
                fails(Map.of(), Map.of("MCPD_UPSTREAMS", "http://ok:1,ftp://x")));
    }

    @Test
    void aBadVariableIsIgnoredWhenAFlagReplacesIt() {
        assertEquals(7, McpdConfig.from(Map.of(Options.WORKERS, List.of("7")), Map.of("MCPD_WORKERS",
                "lots")).delivery().workers());
    }

    @Test
    void theCommasBetweenAKafkaAddresssBrokersDoNotSplitTheUpstreamsVariable() {
        assertEquals(List.of(URI.create("kafka://b1:9092,b2:9092/spans"), URI.create("http://collector:8080"),
                URI.create("kafkas://b3:9093/logs")), McpdConfig.from(Map.of(), Map.of("MCPD_UPSTREAMS",
                "kafka://b1:9092,b2:9092/spans,http://collector:8080,kafkas://b3:9093/logs")).relay().upstreams());
    }

    @Test
    void upstreamMustBeAnAbsoluteHttpUrlWithAHost() {
        assertEquals("invalid value for --upstream: \"mcpd.eu.internal:4317\" is not an upstream URL:"
                + " use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC", failsUpstream("mcpd.eu.internal:4317"));
        assertEquals("invalid value for --upstream: \"/v1/ingest\" is not an upstream URL:"
                + " use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC", failsUpstream("/v1/ingest"));
        assertEquals("invalid value for --upstream: \"http:///x\" is not an upstream URL: it names no host"
                + " (host names may use letters, digits, '-' and '.')", failsUpstream("http:///x"));
        assertEquals("invalid value for --upstream: \"http://a b\" is not an upstream URL", failsUpstream("http://a b"));
        assertEquals(URI.create("HTTPS://Collector.example:443/base"), McpdConfig.from(
                Map.of(Options.UPSTREAM, List.of("HTTPS://Collector.example:443/base")),
                        Map.of()).relay().upstreams().get(0));
    }

    @Test
    void aBadUpstreamUrlIsEchoedWithoutItsCredentials() {
        String message = failsUpstream("ftp://user:hunter2@host");
        assertTrue(message.contains("ftp://user:***@host"), message);
        assertTrue(!message.contains("hunter2"), message);
    }

    @Test
    void numbersMustBeWholeAndInRange() {
        assertEquals("invalid value for --workers: \"four\" is not a whole number", failsFlag(Options.WORKERS, "four"));
        assertEquals("invalid value for --workers: \"-1\" is not a whole number", failsFlag(Options.WORKERS, "-1"));
        assertEquals("invalid value for --workers: \"2.5\" is not a whole number", failsFlag(Options.WORKERS, "2.5"));
        assertEquals("invalid value for --workers: 0 workers is out of range: use 1 to 1024",
                failsFlag(Options.WORKERS, "0"));
        assertEquals("invalid value for --workers: 1025 workers is out of range: use 1 to 1024",
                failsFlag(Options.WORKERS, "1025"));
        assertEquals("invalid value for --workers: \"99999999999999999999\" is too large",
                failsFlag(Options.WORKERS, "99999999999999999999"));
        assertEquals("invalid value for --request-timeout-seconds: 0 seconds is out of range: use 1 to 86400",
                failsFlag(Options.REQUEST_TIMEOUT_SECONDS, "0"));
        assertEquals("invalid value for --max-body-bytes: 0 bytes is too small: use at least 1 byte",
                failsFlag(Options.MAX_BODY_BYTES, "0"));
        assertEquals("invalid value for --spool-max-bytes: 0 bytes is too small: use at least 1 byte",
                failsFlag(Options.SPOOL_MAX_BYTES, "0KiB"));
        assertEquals(1024, McpdConfig.from(Map.of(Options.WORKERS, List.of("1024")), Map.of()).delivery().workers());
        assertEquals(1, McpdConfig.from(Map.of(Options.MAX_BODY_BYTES, List.of("1")),
                Map.of()).listener().maxBodyBytes());
    }

    @Test
    void aBodyLimitTheProcessCannotHoldIsRefusedAtStart() {
        assertEquals("invalid value for --max-body-bytes: 3072 MiB is more than a body can be: at most 1024 MiB (a body"
                + " is held in memory whole)", failsFlag(Options.MAX_BODY_BYTES, "3GiB"));
        assertEquals(Listener.MAX_BODY_CEILING, Listener.checkMaxBodyBytes(ByteSize.GIB));
        assertEquals(128 * ByteSize.MIB, Listener.checkMaxBodyBytesFits(128 * ByteSize.MIB, 512 * ByteSize.MIB));
        IllegalArgumentException tooLarge = assertThrows(IllegalArgumentException.class,
                () -> Listener.checkMaxBodyBytesFits(129 * ByteSize.MIB, 512 * ByteSize.MIB));
        assertEquals("129 MiB does not fit this process's heap of 512 MiB: bodies may take a quarter of it; give it"
                + " at least 4 × the body (MCPD_HEAP) or lower the limit", tooLarge.getMessage());
    }

    @Test
    void emptyFlagValuesAreRefused() {
        assertEquals("invalid value for --ingest-key: the key is empty", failsFlag(Options.INGEST_KEY, ""));
        assertEquals("invalid value for --data: the value is empty: name a file or a postgres:// URL",
                failsFlag(Options.DATA, ""));
        assertEquals("invalid value for --spool-dir: the value is empty: name a directory",
                failsFlag(Options.SPOOL_DIR, ""));
        assertEquals("invalid value for --listen: \"\" is not HOST:PORT: the port is missing (e.g. 0.0.0.0:4317)",
                failsFlag(Options.LISTEN, ""));
    }

    @Test
    void postgresDataMustNameAHostAndIsEchoedWithoutItsPassword() {
        String message = failsFlag(Options.DATA, "postgres://mcpd:hunter2@/mcpd");
        assertEquals("invalid value for --data: \"postgres://mcpd:***@/mcpd\" is not a postgres:// URL: it names no host",
                message);
    }

    @Test
    void errorMessagesAreOneLineEvenWhenTheValueIsNot() {
        String message = fails(Map.of(), Map.of("MCPD_WORKERS", "4\n5"));
        assertEquals("invalid value for --workers (environment variable MCPD_WORKERS): \"4 5\" is not a whole number",
                message);
    }

    @Test
    void aConfigBuiltInCodeIsValidatedToo() {
        ConfigException e = assertThrows(ConfigException.class, () -> new DeliveryLanes(0, 256, 256, ByteSize.MIB));
        assertEquals("invalid value for --workers (MCPD_WORKERS): 0 workers is out of range: use 1 to 1024",
                e.getMessage());
        ConfigException url = assertThrows(ConfigException.class, () -> new Relaying(
                List.of(URI.create("file:/tmp/x")), Optional.empty(), Path.of("spool"), ByteSize.GIB));
        assertEquals("invalid value for --upstream (MCPD_UPSTREAMS): \"file:/tmp/x\" is not an upstream URL:"
                + " use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC", url.getMessage());
        McpdConfig valid = McpdConfig.from(Map.of(), Map.of());
        ConfigException probe = assertThrows(ConfigException.class, () -> new McpdConfig(valid.listener(),
                valid.ingest(), valid.data(), valid.upkeep(), valid.source(), valid.relay(), valid.delivery(), valid.streams(),
                new HealthChecks("/readyz", List.of(UpstreamProbeAddress.parse("1=off")), Duration.ofSeconds(5),
                        Duration.ofSeconds(2), 2, 3), valid.deadLetters(), valid.tls(), valid.routes()));
        assertEquals("invalid value for --upstream-probe (MCPD_UPSTREAM_PROBES): upstream 1 does not exist: there are"
                + " 0 --upstream", probe.getMessage(), "a check across sections, made where they meet");
    }

    @Test
    void upstreamListCannotBeChangedAfterwards() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of("MCPD_UPSTREAMS", "http://a:1"));
        assertThrows(UnsupportedOperationException.class,
                () -> config.relay().upstreams().add(URI.create("http://b:1")));
    }

    @Test
    void anUpstreamIsCheckedAtAnAddressOfItsOwnOrNotAtAll() {
        McpdConfig config = McpdConfig.fromEnvironment(Map.of("MCPD_UPSTREAMS", "http://gw:4318,http://other:4318",
                "MCPD_UPSTREAM_PROBES", "1=http://gw:13133/, 2=off"));
        assertEquals(List.of(new UpstreamProbeAddress(1, Optional.of(URI.create("http://gw:13133/"))),
                new UpstreamProbeAddress(2, Optional.empty())), config.health().upstreamProbes());
        assertTrue(config.describe().stream().anyMatch(line -> line.startsWith("health ") && line.endsWith(
                "; upstream 1 checked at http://gw:13133/; upstream 2 not probed")), config.describe().toString());
        assertEquals(List.of(), McpdConfig.fromEnvironment(Map.of()).health().upstreamProbes());

        Map<Option<?>, List<String>> twoUpstreams = Map.of(Options.UPSTREAM, List.of("http://a:1", "http://b:1"));
        assertEquals("invalid value for --upstream-probe (MCPD_UPSTREAM_PROBES): upstream 3 does not exist: there are 2 --upstream",
                fails(with(twoUpstreams, "3=off"), Map.of()));
        assertEquals("invalid value for --upstream-probe (MCPD_UPSTREAM_PROBES): upstream 1 is named twice",
                fails(with(twoUpstreams, "1=off", "1=http://a:2/"), Map.of()));
        assertEquals("invalid value for --upstream-probe: upstream 0 does not exist: upstreams count from 1",
                fails(with(twoUpstreams, "0=off"), Map.of()));
        assertEquals("invalid value for --upstream-probe: \"http://a:2/\" is not ORDER=URL or ORDER=off (such as"
                + " 2=http://gateway:13133/ for the second --upstream)", fails(with(twoUpstreams, "http://a:2/"), Map.of()));
        assertEquals("invalid value for --upstream-probe: \"ftp://a:2/\" is not an upstream URL: use"
                + " http://HOST:PORT or https://HOST:PORT", fails(with(twoUpstreams, "2=ftp://a:2/"), Map.of()));
    }

    private static Map<Option<?>, List<String>> with(Map<Option<?>, List<String>> flags, String... probes) {
        Map<Option<?>, List<String>> all = new HashMap<>(flags);
        all.put(Options.UPSTREAM_PROBE, List.of(probes));
        return all;
    }

    @Test
    void retryableStatusesAreFourHundredsOtherThanTheAlwaysRetriedOnes() {
        assertEquals(Set.of(409, 425), McpdConfig.from(Map.of(Options.RETRYABLE_STATUS, List.of("425, 409,")), Map.of())
                .deadLetters().retryableStatuses());
        assertEquals(Set.of(409), McpdConfig.fromEnvironment(Map.of("MCPD_RETRYABLE_STATUS",
                "409")).deadLetters().retryableStatuses());
        assertEquals(Set.of(), McpdConfig.fromEnvironment(Map.of()).deadLetters().retryableStatuses());
        assertEquals("invalid value for --retryable-status: 503 is not a 4xx status: 5xx, timeouts and refused"
                + " connections are always retried; only 4xx can be named", failsFlag(Options.RETRYABLE_STATUS, "503"));
        assertEquals("invalid value for --retryable-status: 429 is always retried already: name other 4xx codes",
                failsFlag(Options.RETRYABLE_STATUS, "409,429"));
        assertEquals("invalid value for --retryable-status (environment variable MCPD_RETRYABLE_STATUS): \"conflict\""
                + " is not an HTTP status: list 4xx codes such as 409,425",
                fails(Map.of(), Map.of("MCPD_RETRYABLE_STATUS", "conflict")));
        assertEquals("invalid value for --retryable-status: the list is empty: name 4xx codes such as 409,425",
                failsFlag(Options.RETRYABLE_STATUS, ","));
    }

    @Test
    void spoolMaxAgeIsADurationFromASecondToAYear() {
        assertEquals(Optional.of(Duration.ofHours(24)),
                McpdConfig.fromEnvironment(Map.of("MCPD_SPOOL_MAX_AGE", "24h")).deadLetters().spoolMaxAge());
        assertEquals(Optional.empty(), McpdConfig.fromEnvironment(Map.of()).deadLetters().spoolMaxAge());
        assertEquals("invalid value for --spool-max-age: \"1 day\" is not a duration: use a whole number and a unit,"
                + " like 90s, 15m, 24h or 7d", failsFlag(Options.SPOOL_MAX_AGE, "1 day"));
        assertEquals("invalid value for --spool-max-age: 500ms is out of range: use 1s to 366d",
                failsFlag(Options.SPOOL_MAX_AGE, "500ms"));
        assertEquals("invalid value for --spool-max-age: 400d is out of range: use 1s to 366d",
                failsFlag(Options.SPOOL_MAX_AGE, "400d"));
    }

    @Test
    void healthCheckOptionsAreValidatedWithAReason() {
        assertEquals("invalid value for --healthy-threshold: 0 checks is out of range: use 1 to 100",
                failsFlag(Options.HEALTHY_THRESHOLD, "0"));
        assertEquals("invalid value for --unhealthy-threshold (environment variable MCPD_UNHEALTHY_THRESHOLD): 101"
                + " checks is out of range: use 1 to 100", fails(Map.of(), Map.of("MCPD_UNHEALTHY_THRESHOLD", "101")));
        assertEquals("invalid value for --probe-path: \"readyz\" is not a path: it starts with / and holds visible"
                + " ASCII characters only (at most 1024)", failsFlag(Options.PROBE_PATH, "readyz"));
        assertEquals("invalid value for --probe-timeout-seconds (MCPD_PROBE_TIMEOUT_SECONDS): 5 seconds is not"
                + " shorter than --probe-interval-seconds (5): a check must end before the next",
                fails(Map.of(Options.PROBE_TIMEOUT_SECONDS, List.of("5")), Map.of()));
        assertEquals("invalid value for --probe-interval-seconds: 0 seconds is out of range: use 1 to 3600",
                failsFlag(Options.PROBE_INTERVAL_SECONDS, "0"));
        McpdConfig elb = McpdConfig.from(Map.of(Options.PROBE_INTERVAL_SECONDS, List.of("6"),
                Options.PROBE_TIMEOUT_SECONDS, List.of("3"), Options.HEALTHY_THRESHOLD, List.of("4"),
                Options.UNHEALTHY_THRESHOLD, List.of("4"), Options.PROBE_PATH, List.of("/health")), Map.of());
        assertTrue(elb.describe().contains(String.format("%-16s%s", "health", "GET /health every 6 s, 3 s timeout;"
                + " out of service after 4 failed checks in a row, back after 4 successful ones")), elb.describe()
                .toString());
    }

    @Test
    void theLeasePassAndTheRetentionWindowsAreReadAndBounded() {
        assertEquals(StoreUpkeep.defaults(), McpdConfig.fromEnvironment(Map.of()).upkeep());
        StoreUpkeep given = McpdConfig.fromEnvironment(Map.of("MCPD_LEASE_PASS_SECONDS", "3",
                "MCPD_DEDUP_WINDOW", "2d", "MCPD_RETENTION", "90d")).upkeep();
        assertEquals(new StoreUpkeep(Duration.ofSeconds(3), Duration.ofDays(2), Optional.of(Duration.ofDays(90))),
                given);
        assertEquals(Duration.ofSeconds(9), given.leaseTerm(), "three passes");
        assertEquals("invalid value for --lease-pass-seconds: 0 s is out of range: use 1 to 600",
                failsFlag(Options.LEASE_PASS_SECONDS, "0"));
        assertEquals("invalid value for --dedup-window: 30s is out of range: use 1m to 3660d",
                failsFlag(Options.DEDUP_WINDOW, "30s"));
        assertEquals("invalid value for --retention: \"forever\" is not a duration: use a whole number and a unit,"
                + " like 90s, 15m, 24h or 7d", failsFlag(Options.RETENTION, "forever"));
    }

    private static String failsFlag(Option<?> option, String value) {
        return fails(Map.of(option, List.of(value)), Map.of());
    }

    private static String failsUpstream(String value) {
        return failsFlag(Options.UPSTREAM, value);
    }

    private static String fails(Map<Option<?>, List<String>> flags, Map<String, String> environment) {
        String message = assertThrows(ConfigException.class, () -> McpdConfig.from(flags, environment)).getMessage();
        assertTrue(message.lines().count() == 1, "one line: " + message);
        return message;
    }
}
