package dev.mcpd.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One server for all the tests of a class, in a fresh folder: started before the first test and stopped (its folder
 * removed) after the last. {@code SharedRelay} and {@code SharedCollector} are this, for their server.
 *
 * @param <S> the running server
 */
public class SharedServer<S extends AutoCloseable> implements BeforeAllCallback, AfterAllCallback {

    private final String name;
    private final Function<Path, S> start;
    private Path dir;
    private S server;

    /** {@code start} starts the server in the folder it is given. */
    protected SharedServer(String name, Function<Path, S> start) {
        this.name = name;
        this.start = start;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("mcpd-" + name + "-test");
        server = start.apply(dir);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (UncheckedIOException | IOException e) {
                // a folder left behind in the temp directory is no test's result
            }
        }
    }

    /** The server itself, while the class's tests run. */
    public S running() {
        if (server == null) {
            throw new IllegalStateException("the shared " + name + " runs only while the class's tests run");
        }
        return server;
    }
}
