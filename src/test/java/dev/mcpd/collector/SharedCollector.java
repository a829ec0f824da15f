package dev.mcpd.collector;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One collector for all the tests of a class: {@code @RegisterExtension static final SharedCollector collector = new
 * SharedCollector()} starts it (archiving in a fresh folder) before the first test and stops it after the last.
 * It answers what a {@link RunningCollector} does, and {@link CollectorHttp} takes it where it takes one.
 */
final class SharedCollector implements BeforeAllCallback, AfterAllCallback {

    private final Map<String, String> environment;
    private Path dir;
    private RunningCollector collector;

    /** A collector configured by these MCPD_ variables (over the defaults {@link RunningCollector} sets). */
    SharedCollector(Map<String, String> environment) {
        this.environment = environment;
    }

    SharedCollector() {
        this(Map.of());
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("mcpd-collector-test");
        collector = RunningCollector.start(dir, environment);
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        try {
            if (collector != null) {
                collector.close();
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** The collector itself, while the class's tests run. */
    RunningCollector running() {
        if (collector == null) {
            throw new IllegalStateException("the shared collector runs only while the class's tests run");
        }
        return collector;
    }

    URI uri(String pathAndQuery) {
        return running().uri(pathAndQuery);
    }

    /** The SQLite file the collector archives in. */
    Path dataFile() {
        return running().dataFile();
    }
}
