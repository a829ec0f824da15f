package dev.mcpd.collector;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.testing.TestConfig;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

/**
 * A collector ({@code mcpd serve}) started in this JVM on a free loopback port, archiving in an embedded SQLite file
 * in a test's folder: the real Camel Main, Vert.x listener, routes and store.
 */
public final class RunningCollector implements AutoCloseable {

    private final CollectorApplication application;
    private final McpdConfig config;

    private RunningCollector(CollectorApplication application, McpdConfig config) {
        this.application = application;
        this.config = config;
    }

    /** Starts a collector archiving in {@code dir/mcpd.db}, configured by MCPD_ variables ({@code extra} wins). */
    public static RunningCollector start(Path dir, Map<String, String> extra) {
        return startOn(dir.resolve("mcpd.db"), extra);
    }

    public static RunningCollector start(Path dir) {
        return start(dir, Map.of());
    }

    /** Starts a collector archiving in exactly this SQLite file. */
    public static RunningCollector startOn(Path dataFile, Map<String, String> extra) {
        McpdConfig config = TestConfig.on(dataFile, Map.of(), extra);
        return new RunningCollector(CollectorApplication.start(config), config);
    }

    public URI uri(String pathAndQuery) {
        return URI.create(baseUrl() + pathAndQuery);
    }

    /** {@code http://127.0.0.1:PORT}: what a relay names as its upstream. */
    public String baseUrl() {
        return "http://127.0.0.1:" + application.address().port();
    }

    public int port() {
        return application.address().port();
    }

    /** The SQLite file the collector archives in. */
    public Path dataFile() {
        return Path.of(config.data());
    }

    public CollectorApplication application() {
        return application;
    }

    @Override
    public void close() {
        application.close();
    }
}
