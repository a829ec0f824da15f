package dev.mcpd.relay;

import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One relay for all the tests of a class: {@code @RegisterExtension static final SharedRelay relay = new
 * SharedRelay(Map.of(...))} starts it (in a fresh folder) before the first test and stops it after the last.
 */
final class SharedRelay implements BeforeAllCallback, AfterAllCallback {

    private final Map<String, String> environment;
    private Path dir;
    private RunningRelay relay;

    SharedRelay(Map<String, String> environment) {
        this.environment = environment;
    }

    SharedRelay() {
        this(Map.of());
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("mcpd-relay-test");
        relay = RunningRelay.start(dir, environment);
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        try {
            relay.close();
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    URI uri(String pathAndQuery) {
        return relay.uri(pathAndQuery);
    }

    int port() {
        return relay.port();
    }

    Path spoolDir() {
        return relay.spoolDir();
    }

    List<SpoolEntry> spooled() {
        return relay.spooled();
    }
}
