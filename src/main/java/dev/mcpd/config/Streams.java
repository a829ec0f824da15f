package dev.mcpd.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * What receivers need of the relay: which requests form ordered streams ({@code --ordered-path}), and which of a
 * sender's headers are kept with each entry and forwarded with it ({@code --forward-header}) — {@code mcpd config}'s
 * {@code streams} line.
 *
 * @param orderedPaths   paths, or prefixes ending in {@code *}, whose entries travel in order; empty: none
 * @param forwardHeaders header names kept and forwarded, as written; empty: none
 */
public record Streams(List<String> orderedPaths, List<String> forwardHeaders) {

    /** The header of Prometheus remote write: a request that carries it is ordered, whatever its path. */
    public static final String REMOTE_WRITE_VERSION = "X-Prometheus-Remote-Write-Version";
    /** A kept value, at most; and all of an entry's kept values together. */
    public static final int MAX_VALUE_BYTES = 1024;
    public static final int MAX_TOTAL_BYTES = 4096;

    private static final String NONE = "none";
    /** Headers that steer the relay or the connection: never a sender's to forward. */
    private static final Set<String> STEERING = Set.of("host", "authorization", "x-mcpd-key", "content-length",
            "content-type", "content-encoding", "transfer-encoding", "connection", "idempotency-key", "keep-alive",
            "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade", "expect");

    public Streams {
        orderedPaths = withoutNone(Options.ORDERED_PATH, orderedPaths);
        forwardHeaders = withoutNone(Options.FORWARD_HEADER, forwardHeaders);
        List<String> seen = new ArrayList<>();
        for (String name : forwardHeaders) {
            String lower = name.toLowerCase(Locale.ROOT);
            OptionValues.check(Options.FORWARD_HEADER, () -> {
                if (seen.contains(lower)) {
                    throw new IllegalArgumentException(name + " is named twice");
                }
                return name;
            });
            seen.add(lower);
        }
    }

    /** The defaults: {@code mcpd config} with nothing given, and tests. */
    public static Streams defaults() {
        return new Streams(Options.ORDERED_PATH.defaultList(), Options.FORWARD_HEADER.defaultList());
    }

    /** {@code none}, alone, is the empty list; beside other values it is an error. */
    private static List<String> withoutNone(Option<String> option, List<String> values) {
        Objects.requireNonNull(values, option.flag());
        if (values.stream().anyMatch(NONE::equals)) {
            OptionValues.check(option, () -> {
                if (values.size() > 1) {
                    throw new IllegalArgumentException("none stands alone: it turns " + option.flag()
                            + " off, so it cannot be given beside other values");
                }
                return NONE;
            });
            return List.of();
        }
        return List.copyOf(values);
    }

    /**
     * A header name to forward: an HTTP token (RFC 9110), not one that steers the relay or the connection, nor
     * {@code mcpd-*}, nor an HTTP/2 pseudo-header; or {@code none}.
     */
    static String checkForwardHeader(String text) {
        String name = text.strip();
        if (name.equals(NONE)) {
            return NONE;
        }
        if (name.startsWith(":")) {
            throw new IllegalArgumentException(name + " is an HTTP/2 pseudo-header: it belongs to the connection and"
                    + " cannot be forwarded");
        }
        if (name.isEmpty() || !name.chars().allMatch(Streams::tokenChar)) {
            throw new IllegalArgumentException("'" + name + "' is not a header name (letters, digits and"
                    + " !#$%&'*+-.^_`|~ only)");
        }
        String lower = name.toLowerCase(Locale.ROOT);
        if (STEERING.contains(lower) || lower.startsWith("mcpd-")) {
            throw new IllegalArgumentException(name + " steers the relay or the connection and cannot be forwarded"
                    + " (the relay sets it itself, or keeps it as a sender's credential)");
        }
        return name;
    }

    private static boolean tokenChar(int c) {
        return c < 0x7f && (Character.isLetterOrDigit(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0);
    }

    /** A path or a prefix ending in {@code *}, as a request target's path starts; or {@code none}. */
    static String checkOrderedPath(String text) {
        String path = text.strip();
        if (path.equals(NONE)) {
            return NONE;
        }
        if (!path.startsWith("/") || path.indexOf('*') != path.lastIndexOf('*')
                || (path.indexOf('*') >= 0 && !path.endsWith("*"))
                || path.chars().anyMatch(c -> c <= 0x20 || c >= 0x7f || c == '?' || c == '#')) {
            throw new IllegalArgumentException("'" + path + "' is not a path (/api/v1/write) or a prefix ending in *"
                    + " (/otlp/*)");
        }
        return path;
    }

    /**
     * Whether a request to {@code path} (a target's path, its query left out) forms ordered streams: its path is one of
     * {@link #orderedPaths}, or it carries {@link #REMOTE_WRITE_VERSION} — unless ordering is off ({@code none}).
     */
    public boolean ordered(String path, boolean remoteWrite) {
        if (orderedPaths.isEmpty()) {
            return false;
        }
        if (remoteWrite) {
            return true;
        }
        for (String ordered : orderedPaths) {
            if (ordered.endsWith("*") ? path.startsWith(ordered.substring(0, ordered.length() - 1))
                    : path.equals(ordered)) {
                return true;
            }
        }
        return false;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        String order = orderedPaths.isEmpty() ? "nothing in order (--ordered-path none)"
                : "in order: " + String.join(", ", orderedPaths) + ", and any request with " + REMOTE_WRITE_VERSION;
        return order + "; forwarded with each entry: "
                + (forwardHeaders.isEmpty() ? "no sender header" : String.join(", ", forwardHeaders));
    }
}
