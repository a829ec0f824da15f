package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** An invalid value or option is one line on stderr and exit status 2 — never a stack trace. */
class CommandLineErrorsTest {

    @Test
    void negativeSizeIsOneLineNamingTheFlag() {
        run(Map.of(), "config", "--spool-max-bytes", "-5").assertUsageErrorLine("mcpd: invalid value for"
                + " --spool-max-bytes: \"-5\" is not a byte size: use a whole number of bytes, KiB, MiB or GiB (e.g. 16MiB)");
    }

    @Test
    void badValueBeforeTheCommandIsReportedTheSameWay() {
        run(Map.of(), "--spool-max-bytes", "-5", "config").assertUsageErrorLine("mcpd: invalid value for"
                + " --spool-max-bytes: \"-5\" is not a byte size: use a whole number of bytes, KiB, MiB or GiB (e.g. 16MiB)");
    }

    @Test
    void badValueFromTheEnvironmentNamesTheVariable() {
        run(Map.of("MCPD_WORKERS", "many"), "config").assertUsageErrorLine(
                "mcpd: invalid value for --workers (environment variable MCPD_WORKERS): \"many\" is not a whole number");
        run(Map.of("MCPD_UPSTREAMS", "mcpd.eu.internal:4317"), "relay").assertUsageErrorLine(
                "mcpd: invalid value for --upstream (environment variable MCPD_UPSTREAMS): \"mcpd.eu.internal:4317\""
                        + " is not an upstream URL: use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC");
    }

    @Test
    void anUpstreamUrlWithAQueryIsOneLineThatDoesNotPrintIt() {
        // Issue 12: a token in an upstream's query would reach metric labels, /relay/status and /readyz.
        run(Map.of(), "relay", "--upstream", "https://collector.example/?token=url-S3CRET").assertUsageErrorLine(
                "mcpd: invalid value for --upstream: \"https://collector.example/?token=***\" carries a query or"
                        + " fragment: an upstream URL is scheme, host, port and path; give the relay's key with"
                        + " --upstream-key");
    }

    @Test
    void aBadKafkaUpstreamIsOneLineSayingWhatIsWrong() {
        run(Map.of(), "relay", "--upstream", "kafka://broker:9092").assertUsageErrorLine("mcpd: invalid value for"
                + " --upstream: a Kafka address names its topic: kafka://HOST:PORT/TOPIC");
        run(Map.of(), "relay", "--upstream", "kafka://broker/spans").assertUsageErrorLine("mcpd: invalid value for"
                + " --upstream: 'broker' is not a broker's HOST:PORT");
        run(Map.of(), "relay", "--upstream", "kafka://user:pw@broker:9092/spans").assertUsageErrorLine("mcpd:"
                + " invalid value for --upstream: a Kafka address carries no credentials: give TLS client files"
                + " instead");
        run(Map.of("MCPD_UPSTREAMS", "kafka://b1:9092,b2:9092/spans,kafka://b3:9092/no such topic"), "relay")
                .assertUsageErrorLine("mcpd: invalid value for --upstream (environment variable MCPD_UPSTREAMS):"
                        + " \"kafka://b3:9092/no such topic\" is not an upstream URL");
    }

    @Test
    void aBadKafkaSourceOrGroupIsOneLine() {
        run(Map.of(), "serve", "--source", "http://broker:9092/spans").assertUsageErrorLine("mcpd: invalid value for"
                + " --source: \"http://broker:9092/spans\" is not a Kafka address: use"
                + " kafka://HOST:PORT[,HOST:PORT]/TOPIC (the collector speaks to its brokers in plain Kafka)");
        run(Map.of(), "serve", "--source", "kafkas://broker:9093/spans").assertUsageErrorLine("mcpd: invalid value"
                + " for --source: \"kafkas://broker:9093/spans\" is not a Kafka address: use"
                + " kafka://HOST:PORT[,HOST:PORT]/TOPIC (the collector speaks to its brokers in plain Kafka)");
        run(Map.of(), "serve", "--source", "kafka://broker:9092").assertUsageErrorLine("mcpd: invalid value for"
                + " --source: a Kafka address names its topic: kafka://HOST:PORT/TOPIC");
        run(Map.of("MCPD_SOURCE_GROUP", "a group"), "serve").assertUsageErrorLine("mcpd: invalid value for"
                + " --source-group (environment variable MCPD_SOURCE_GROUP): \"a group\" is not a group name: use"
                + " letters, digits, '.', '_' and '-', at most 249");
    }

    @TestFactory
    Stream<DynamicTest> everyBadValueIsOneLineAndExitStatusTwo() {
        return Stream.of(
                        List.of("config", "--listen", "4317"),
                        List.of("config", "--listen", "localhost:70000"),
                        List.of("relay", "--upstream", "ftp://mcpd.eu.internal"),
                        List.of("relay", "--upstream", "not a url"),
                        List.of("relay", "--upstream", "http://x:1", "--upstream", "//no-scheme"),
                        List.of("relay", "--upstream", "http://x:1/?a=b"),
                        List.of("relay", "--upstream", "http://x:1/#f"),
                        List.of("config", "--spool-max-bytes", "1.5GiB"),
                        List.of("config", "--spool-max-bytes", "10MB"),
                        List.of("config", "--max-body-bytes", "0"),
                        List.of("config", "--max-body-bytes", "99999999999999GiB"),
                        List.of("config", "--request-timeout-seconds", "thirty"),
                        List.of("config", "--request-timeout-seconds", "0"),
                        List.of("config", "--workers", "-1"),
                        List.of("config", "--workers", "0"),
                        List.of("config", "--max-in-flight", "0"),
                        List.of("config", "--max-in-flight", "65537"),
                        List.of("config", "--batch-max-entries", "0"),
                        List.of("config", "--batch-max-entries", "65537"),
                        List.of("config", "--batch-max-bytes", "0"),
                        List.of("config", "--batch-max-bytes", "lots"),
                        List.of("serve", "--max-in-flight", "8"),
                        List.of("config", "--ingest-key", ""),
                        List.of("config", "--data", ""),
                        List.of("config", "--data", "postgres://"),
                        List.of("config", "--bogus"),
                        List.of("--bogus", "config"),
                        List.of("config", "--workers"),
                        List.of("config", "stray"),
                        List.of("relay", "--upstream", "http://a:1", "extra"),
                        List.of("relay", "--upstream"),
                        List.of("relay", "--upstream", "http://a:1", "--forward-header", "Authorization"),
                        List.of("config", "--forward-header", "Host"),
                        List.of("config", "--forward-header", "mcpd-relay-wait"),
                        List.of("config", "--forward-header", ":authority"),
                        List.of("config", "--forward-header", "X Tenant"),
                        List.of("config", "--ordered-path", "api/v1/write"))
                .map(args -> dynamicTest(String.join(" ", args), () -> run(Map.of(), args.toArray(String[]::new))
                        .assertUsageError()));
    }

    @Test
    void aHeaderThatSteersTheRelayCannotBeForwarded() {
        run(Map.of(), "config", "--forward-header", "Content-Length").assertUsageErrorLine("mcpd: invalid value for"
                + " --forward-header: Content-Length steers the relay or the connection and cannot be forwarded (the"
                + " relay sets it itself, or keeps it as a sender's credential)");
    }

    @Test
    void unknownOptionIsOneLineWithAHint() {
        run(Map.of(), "config", "--bogus").assertUsageErrorLine("mcpd: unknown option: '--bogus' (see 'mcpd config --help')");
    }

    @Test
    void aStrayWordIsNamed() {
        run(Map.of(), "config", "stray").assertUsageErrorLine("mcpd: unexpected argument 'stray' (see 'mcpd config --help')");
    }

    @Test
    void anUnknownCommandNamesTheOnesThatExist() {
        run(Map.of(), "forward").assertUsageErrorLine(
                "mcpd: unknown command 'forward': use relay, serve or config (see 'mcpd --help')");
    }

    @Test
    void noCommandIsAUsageError() {
        run(Map.of()).assertUsageErrorLine("mcpd: name a command: relay, serve or config (see 'mcpd --help')");
        run(Map.of(), "--workers", "3")
                .assertUsageErrorLine("mcpd: name a command: relay, serve or config (see 'mcpd --help')");
    }

    @Test
    void helpListsTheCommandsAndEveryOptionWithItsVariable() {
        McpdRun run = run(Map.of(), "--help");
        assertEquals(0, run.status());
        assertEquals("", run.err());
        assertTrue(run.out().startsWith("Usage: mcpd [OPTIONS] COMMAND [OPTIONS]"), run.out());
        assertTrue(run.out().contains("  relay "), run.out());
        assertTrue(run.out().contains("  config "), run.out());
        assertTrue(run.out().contains("  serve "), run.out());
        for (String variable : List.of("MCPD_LISTEN", "MCPD_DATA", "MCPD_SPOOL_DIR", "MCPD_UPSTREAMS", "MCPD_INGEST_KEY",
                "MCPD_UPSTREAM_KEY", "MCPD_SPOOL_MAX_BYTES", "MCPD_MAX_BODY_BYTES", "MCPD_REQUEST_TIMEOUT_SECONDS",
                "MCPD_WORKERS", "MCPD_QUOTA_PER_MINUTE", "MCPD_ROUTES")) {
            assertTrue(run.out().contains(variable), variable + " in " + run.out());
        }
    }

    @Test
    void eachCommandsHelpListsOnlyItsRolesOptions() {
        String relay = run(Map.of(), "relay", "--help").out();
        assertTrue(relay.contains("--upstream=URL") && relay.contains("--workers=N"), relay);
        assertTrue(!relay.contains("--quota-per-minute"), "the quota is the collector's: " + relay);
        String serve = run(Map.of(), "serve", "--help").out();
        assertTrue(serve.contains("--quota-per-minute=N") && !serve.contains("--upstream"), serve);
        String check = run(Map.of(), "relay", "spool", "check", "--help").out();
        assertTrue(check.contains("--spool-dir=DIR") && !check.contains("--workers"), check);
    }

    @Test
    void anotherRolesOptionIsAUsageErrorBeforeTheCommandAsAfterIt() {
        run(Map.of(), "--quota-per-minute", "5", "relay", "--upstream", "http://a:1").assertUsageErrorLine(
                "mcpd: --quota-per-minute is not an option of mcpd relay (see 'mcpd relay --help')");
        run(Map.of(), "--workers", "5", "serve").assertUsageErrorLine(
                "mcpd: --workers is not an option of mcpd serve (see 'mcpd serve --help')");
        assertEquals(2, run(Map.of(), "relay", "--quota-per-minute", "5", "--upstream", "http://a:1").status());
        assertEquals(0, run(Map.of(), "--quota-per-minute", "5", "config").status(), "config shows every option");
    }

    @Test
    void theTopLevelHelpNamesTheNestedSpoolCommands() {
        String help = run(Map.of(), "--help").out();
        assertTrue(help.contains("  relay spool check   read-only fsck of the relay's spool"), help);
        assertTrue(help.contains("  relay spool list    the oldest entries waiting, with their failed attempts"), help);
    }

    @Test
    void commandHelpWorksAndStartsNothing() {
        McpdRun run = run(Map.of(), "relay", "--help");
        assertEquals(0, run.status());
        assertTrue(run.out().startsWith("Usage: mcpd relay "), run.out());
        assertEquals(List.of(), run.relayStarts());
    }

    @Test
    void versionIs010() {
        McpdRun run = run(Map.of(), "--version");
        assertEquals(0, run.status());
        assertEquals("mcpd 0.1.0" + System.lineSeparator(), run.out());
        assertEquals("mcpd 0.1.0" + System.lineSeparator(), run(Map.of(), "config", "--version").out());
    }
}
