package dev.mcpd.cli;

import dev.mcpd.config.McpdConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The configuration a written {@code mcpd relay …} or {@code mcpd serve …} gives its role, parsed by the real command
 * line (its flags, their roles, their checks) without starting the role: a test of a documented command starts the
 * role itself, in its JVM, with what the words say.
 */
public final class WrittenCommand {

    /** Which role the command runs, and with what. */
    public record Parsed(String role, McpdConfig config) {
    }

    private WrittenCommand() {
    }

    /** {@code words} without the leading {@code mcpd}, such as {@code serve --listen 127.0.0.1:4318}. */
    public static Parsed parse(Map<String, String> environment, List<String> words) {
        List<Parsed> started = new ArrayList<>();
        StringWriter err = new StringWriter();
        int status = Mcpd.execute(environment, new PrintWriter(new StringWriter()), new PrintWriter(err),
                config -> record(started, "relay", config), config -> record(started, "serve", config),
                words.toArray(String[]::new));
        if (status != 0 || started.size() != 1) {
            throw new AssertionError("mcpd " + String.join(" ", words) + ": exit status " + status + ", " + err);
        }
        return started.get(0);
    }

    private static int record(List<Parsed> started, String role, McpdConfig config) {
        started.add(new Parsed(role, config));
        return 0;
    }
}
