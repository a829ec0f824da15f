package dev.mcpd.relay;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolReader;
import dev.mcpd.testing.TestConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;

/** A relay started in this JVM on a free loopback port, with its spool in a test's folder. */
final class RunningRelay implements AutoCloseable {

    private final RelayApplication application;
    private final McpdConfig config;

    private RunningRelay(RelayApplication application, McpdConfig config) {
        this.application = application;
        this.config = config;
    }

    /** Starts a relay configured by MCPD_ variables ({@code extra} may override the defaults set here). */
    static RunningRelay start(Path dir, Map<String, String> extra) {
        return start(dir, extra, RelayApplication.Tuning.standard());
    }

    /** Starts a tuned relay (shorter backoff and timeouts for delivery tests). */
    static RunningRelay start(Path dir, Map<String, String> extra, RelayApplication.Tuning tuning) {
        McpdConfig config = TestConfig.on(dir.resolve("mcpd.db"), Map.of("MCPD_UPSTREAMS", "http://127.0.0.1:9"),
                extra);
        return new RunningRelay(RelayApplication.start(config, tuning), config);
    }

    /** Starts a relay of this configuration (one made from flags, as the command line makes it). */
    static RunningRelay start(McpdConfig config, RelayApplication.Tuning tuning) {
        return new RunningRelay(RelayApplication.start(config, tuning), config);
    }

    /** Starts a tuned relay delivering to the given upstreams, in order. */
    static RunningRelay start(Path dir, Map<String, String> extra, RelayApplication.Tuning tuning,
            TestUpstream... upstreams) {
        Map<String, String> environment = new HashMap<>(extra);
        environment.put("MCPD_UPSTREAMS", Stream.of(upstreams).map(u -> u.url().toString())
                .collect(Collectors.joining(",")));
        return start(dir, environment, tuning);
    }

    static RunningRelay start(Path dir) {
        return start(dir, Map.of());
    }

    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + application.address().port() + pathAndQuery);
    }

    RelayApplication application() {
        return application;
    }

    int port() {
        return application.address().port();
    }

    Path spoolDir() {
        return config.relay().relaySpoolDir();
    }

    /** What the spool holds on disk now (read from the files, as a restart would). */
    List<SpoolEntry> spooled() {
        try {
            return SpoolReader.read(config.relay().relaySpoolDir()).entries();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        application.close();
    }

    /**
     * Stops the relay and asserts the stop was prompt: it waits out neither a caller's long wait nor the 10 s a stop
     * gives answers in flight.
     */
    public void closePromptly() {
        long started = System.nanoTime();
        close();
        long tookMillis = (System.nanoTime() - started) / 1_000_000;
        Assertions.assertTrue(tookMillis < 8_000, "the stop took " + tookMillis + " ms");
    }
}
