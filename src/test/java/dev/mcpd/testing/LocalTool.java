package dev.mcpd.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** A program a test runs that this machine may lack (helm, promtool, prometheus): where it is, if anywhere. */
public final class LocalTool {

    private LocalTool() {
    }

    /** The executable {@code environmentVariable} names (as {@code .ci/run} sets it), else {@code name} on the PATH. */
    public static Optional<String> find(String environmentVariable, String name) {
        String given = System.getenv(environmentVariable);
        if (given != null && Files.isExecutable(Path.of(given))) {
            return Optional.of(given);
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
                return Optional.of(Path.of(dir, name).toString());
            }
        }
        return Optional.empty();
    }
}
