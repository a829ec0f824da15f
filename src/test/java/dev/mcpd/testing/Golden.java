package dev.mcpd.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The golden files under {@code src/test/resources/golden/}, read from the test class path as
 * {@code /golden/<name>}. A test compares what the program makes with them; only with
 * {@code -Dmcpd.golden.write=true} does it write them instead (into {@code src/test/resources/golden/}, to be
 * reviewed and committed), so that {@code mvn verify} never changes a tracked file.
 */
public final class Golden {

    /** The system property that has tests write their golden files rather than compare with them. */
    public static final String WRITE_PROPERTY = "mcpd.golden.write";

    private Golden() {
    }

    public static boolean writing() {
        return Boolean.getBoolean(WRITE_PROPERTY);
    }

    /** Where {@code name} is kept in the source tree. */
    public static Path source(String name) {
        return ReliabilityReport.basedir().resolve("src/test/resources/golden").resolve(name);
    }

    public static byte[] bytes(String name) {
        try (InputStream in = Golden.class.getResourceAsStream("/golden/" + name)) {
            assertNotNull(in, "no golden file " + name + " (write it with -D" + WRITE_PROPERTY + "=true)");
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static String text(String name) {
        return new String(bytes(name), StandardCharsets.UTF_8);
    }

    /** {@code actual} is golden file {@code name}, or, when asked, becomes it. */
    public static void assertText(String name, String actual) {
        if (writing()) {
            write(name, actual.getBytes(StandardCharsets.UTF_8));
        }
        assertEquals(text(name), actual, "golden file " + name);
    }

    /** {@code actual} is golden file {@code name}, or, when asked, becomes it. */
    public static void assertBytes(String name, byte[] actual) {
        if (writing()) {
            write(name, actual);
        }
        assertArrayEquals(bytes(name), actual, "golden file " + name);
    }

    /** Writes {@code name} in the source tree and in the test class path, so the run that wrote it reads it back. */
    private static void write(String name, byte[] content) {
        try {
            Path source = source(name);
            Files.createDirectories(source.getParent());
            Files.write(source, content);
            Path compiled = ReliabilityReport.basedir().resolve("target/test-classes/golden").resolve(name);
            Files.createDirectories(compiled.getParent());
            Files.write(compiled, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
