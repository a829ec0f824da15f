package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.ListenAddress;
import dev.mcpd.config.McpdConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code mcpd relay} starts the relay with the resolved configuration, or refuses with one line. */
class RelayCommandTest {
    private static final String NO_UPSTREAM = "mcpd: relay needs at least one upstream: name it with --upstream URL"
            + " or MCPD_UPSTREAMS=URL[,URL…]";

    @Test
    void relayWithoutUpstreamRefusesToStartWithOneLine() {
        run(Map.of(), "relay").assertUsageErrorLine(NO_UPSTREAM);
    }

    @Test
    void anEmptyUpstreamVariableIsNoUpstream() {
        run(Map.of("MCPD_UPSTREAMS", ""), "relay").assertUsageErrorLine(NO_UPSTREAM);
    }

    @Test
    void aBadValueIsReportedBeforeTheMissingUpstream() {
        run(Map.of(), "relay", "--workers", "0")
                .assertUsageErrorLine("mcpd: invalid value for --workers: 0 workers is out of range: use 1 to 1024");
    }

    @Test
    void relayStartsWithTheConfigurationFromFlagsAndEnvironment() {
        McpdRun run = run(Map.of("MCPD_UPSTREAMS", "http://env:1", "MCPD_WORKERS", "6", "MCPD_INGEST_KEY", "in"),
                "--listen", "127.0.0.1:0", "relay", "--upstream", "http://eu:4317", "--upstream", "http://us:4317",
                "--data", "/data/mcpd.db", "--spool-max-bytes", "8MiB", "--request-timeout-seconds", "3");
        assertEquals(0, run.status(), run.err());
        McpdConfig config = run.relayConfig();
        assertEquals(new ListenAddress("127.0.0.1", 0), config.listener().address());
        assertEquals(List.of(URI.create("http://eu:4317"), URI.create("http://us:4317")), config.relay().upstreams());
        assertEquals(Path.of("/data/mcpd.spool/relay"), config.relay().relaySpoolDir());
        assertEquals(8L * 1024 * 1024, config.relay().spoolMaxBytes());
        assertEquals(Duration.ofSeconds(3), config.listener().requestTimeout());
        assertEquals(6, config.delivery().workers());
        assertTrue(config.ingest().key().orElseThrow().matches("in"));
    }

    @Test
    void upstreamsFromTheVariableAreEnoughToStart() {
        McpdRun run = run(Map.of("MCPD_UPSTREAMS", "http://a:1,http://b:1"), "relay");
        assertEquals(List.of(URI.create("http://a:1"), URI.create("http://b:1")),
                run.relayConfig().relay().upstreams());
    }

    @Test
    void theRelayExitStatusIsTheCommandExitStatus() {
        assertEquals(3, McpdRun.run(Map.of(), config -> 3, "relay", "--upstream", "http://a:1").status());
    }

    @Test
    void aFailingRelayIsOneLineWithoutStackTraceAndExitStatusOne() {
        McpdRun run = McpdRun.run(Map.of(), config -> {
            throw new IllegalStateException("port 4317 is in use\nsecond line");
        }, "relay", "--upstream", "http://a:1");
        assertEquals(1, run.status());
        assertEquals("mcpd: relay failed: IllegalStateException: port 4317 is in use" + System.lineSeparator(),
                run.err());
        assertFalse(run.err().contains("\tat "), run.err());
    }
}
