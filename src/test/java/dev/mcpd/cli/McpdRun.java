package dev.mcpd.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.McpdConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import java.util.regex.Pattern;

/** One run of the {@code mcpd} command line in this JVM: its exit status and what it printed. */
record McpdRun(int status, String out, String err, List<McpdConfig> relayStarts) {
    /** A line of a printed stack trace: "\tat dev.mcpd.Foo.bar(Foo.java:12)". */
    private static final Pattern STACK_FRAME = Pattern.compile("(?m)^\\s*at [\\w.$/]+\\(");

    /** Runs {@code mcpd args} against {@code environment}; a relay start is recorded, not performed. */
    static McpdRun run(Map<String, String> environment, String... args) {
        List<McpdConfig> starts = new ArrayList<>();
        return run(environment, config -> {
            starts.add(config);
            return 0;
        }, starts, args);
    }

    /** Runs {@code mcpd args} with {@code relay} standing in for the relay application. */
    static McpdRun run(Map<String, String> environment, ToIntFunction<McpdConfig> relay, String... args) {
        return run(environment, relay, new ArrayList<>(), args);
    }

    private static McpdRun run(Map<String, String> environment, ToIntFunction<McpdConfig> relay,
                               List<McpdConfig> starts, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Mcpd.execute(environment, new PrintWriter(out), new PrintWriter(err), relay, args);
        return new McpdRun(status, out.toString(), err.toString(), List.copyOf(starts));
    }

    List<String> outLines() {
        return out.lines().toList();
    }

    /** The line of {@code mcpd config} for one section, as {@code grep ^section} would find it. */
    String section(String name) {
        return out.lines().filter(line -> line.startsWith(name)).findFirst().orElseThrow();
    }

    McpdConfig relayConfig() {
        assertEquals(1, relayStarts.size(), "the relay started once");
        return relayStarts.get(0);
    }

    /** Exit status 2, nothing on stdout, exactly one line on stderr and no trace of a stack. */
    McpdRun assertUsageErrorLine(String expected) {
        assertUsageError();
        assertEquals(expected + System.lineSeparator(), err);
        return this;
    }

    McpdRun assertUsageError() {
        assertEquals(2, status, "exit status; stderr: " + err);
        assertEquals("", out);
        assertEquals(1, err.lines().count(), "one line on stderr: " + err);
        assertTrue(err.startsWith("mcpd: "), err);
        assertFalse(err.contains("Exception") || STACK_FRAME.matcher(err).find(), err);
        assertEquals(List.of(), relayStarts, "the relay must not start");
        return this;
    }
}
