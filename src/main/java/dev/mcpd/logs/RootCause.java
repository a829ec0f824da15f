package dev.mcpd.logs;

import java.util.stream.Collectors;

/**
 * The innermost cause of a failure, said in one line for an operator: "Connection refused", not the pool's "request
 * timed out after 2002ms", nor the wrapper's class name.
 */
public final class RootCause {

    private RootCause() {
    }

    /** The innermost cause (the failure itself when it has none). */
    public static Throwable of(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root;
    }

    /** The innermost cause's message, first line; its class's name when it has no message. */
    public static String oneLine(Throwable failure) {
        return lines(failure, 1);
    }

    /**
     * The first {@code lines} non-blank lines of the innermost cause's message, joined by a space, without a trailing
     * colon. A YAML route error spans several lines (message, "in file …, line N", the offending text, a caret): its
     * first two say what and where.
     */
    public static String lines(Throwable failure, int lines) {
        Throwable root = of(failure);
        if (root.getMessage() == null || root.getMessage().isBlank()) {
            return root.getClass().getSimpleName();
        }
        String joined = root.getMessage().lines().map(String::strip).filter(l -> !l.isEmpty()).limit(lines)
                .collect(Collectors.joining(" "));
        return joined.endsWith(":") ? joined.substring(0, joined.length() - 1) : joined;
    }
}
