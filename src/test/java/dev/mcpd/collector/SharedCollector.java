package dev.mcpd.collector;

import dev.mcpd.testing.SharedServer;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

/**
 * One collector for all the tests of a class: {@code @RegisterExtension static final SharedCollector collector = new
 * SharedCollector()} starts it (archiving in a fresh folder) before the first test and stops it after the last.
 * It answers what a {@link RunningCollector} does, and {@link CollectorHttp} takes it where it takes one.
 */
final class SharedCollector extends SharedServer<RunningCollector> {

    /** A collector configured by these MCPD_ variables (over the defaults {@link RunningCollector} sets). */
    SharedCollector(Map<String, String> environment) {
        super("collector", dir -> RunningCollector.start(dir, environment));
    }

    SharedCollector() {
        this(Map.of());
    }

    URI uri(String pathAndQuery) {
        return running().uri(pathAndQuery);
    }

    /** The SQLite file the collector archives in. */
    Path dataFile() {
        return running().dataFile();
    }
}
