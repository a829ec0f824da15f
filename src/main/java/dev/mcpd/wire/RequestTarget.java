package dev.mcpd.wire;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.regex.Pattern;

/**
 * A request target as mcpd keeps and forwards it: an absolute path and an optional query (RFC 9112 origin-form) and
 * nothing else. No scheme, host or port ever comes from a sender, so a target can only say <em>which path</em> of an
 * upstream a request goes to, never <em>which upstream</em>.
 *
 * <p>{@link #parse} takes what a sender wrote and gives the target, or refuses it:
 * <ul>
 *   <li>origin-form {@code /path?query} is taken; absolute-form {@code http(s)://authority/path?query} (RFC 9112
 *       section 3.2.2, which a server must accept) is reduced to its path and query — its authority is ignored;</li>
 *   <li>any other form ({@code *}, {@code v1/traces}, {@code @host/x}, {@code :9999/x}) is refused;</li>
 *   <li>only the characters RFC 3986 allows in a path and query are taken, and {@code %} must start a
 *       {@code %HH} escape: a raw NUL, a space, {@code \}, {@code {}}, {@code |} or a non-ASCII byte is refused;</li>
 *   <li>the path is normalised (RFC 3986 section 6.2.2): escapes of unreserved characters are decoded ({@code %2e} is
 *       {@code .}), other escapes get upper-case hex, and dot segments are removed ({@code /a/../b} is {@code /b}),
 *       so a target cannot climb out of the path an upstream URL names. The query is kept as it came.</li>
 * </ul>
 * Delivery parses a stored target again (entries written by an older relay included) and builds the upstream URL from
 * the upstream's own scheme, host and port.
 */
public final class RequestTarget {

    /** An http or https URL's scheme and authority, up to where its path (or query) starts. */
    private static final Pattern ABSOLUTE_FORM = Pattern.compile("^(?i)https?://[^/?#]*");
    private static final String UNRESERVED_PUNCTUATION = "-._~";
    /** RFC 3986 pchar beyond the unreserved characters and escapes: sub-delims, ':' and '@'. */
    private static final String PCHAR_PUNCTUATION = "!$&'()*+,;=:@";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String path;
    private final String query;

    private RequestTarget(String path, String query) {
        this.path = path;
        this.query = query;
    }

    /** The target a sender wrote, normalised; {@link InvalidTarget} with a reason that quotes none of it. */
    public static RequestTarget parse(String raw) throws InvalidTarget {
        if (raw == null || raw.isEmpty()) {
            throw new InvalidTarget("the request target is empty");
        }
        String originForm;
        if (raw.charAt(0) == '/') {
            originForm = raw;
        } else {
            var absolute = ABSOLUTE_FORM.matcher(raw);
            if (!absolute.find()) {
                throw new InvalidTarget("the request target must be an absolute path (/…) or an http(s) URL");
            }
            String rest = raw.substring(absolute.end());
            originForm = rest.isEmpty() || rest.charAt(0) == '?' ? "/" + rest : rest;
        }
        int queryAt = originForm.indexOf('?');
        String rawPath = queryAt < 0 ? originForm : originForm.substring(0, queryAt);
        String query = queryAt < 0 ? null : originForm.substring(queryAt + 1);
        checkCharacters(rawPath, false);
        if (query != null) {
            checkCharacters(query, true);
        }
        return new RequestTarget(removeDotSegments(normaliseEscapes(rawPath)), query);
    }

    /** The absolute path, normalised; starts with {@code /}. */
    public String path() {
        return path;
    }

    /** Path and query as they go upstream: {@code /v1/ingest?tenant=a}. */
    public String text() {
        return query == null ? path : path + "?" + query;
    }

    @Override
    public String toString() {
        return text();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RequestTarget that && that.text().equals(text());
    }

    @Override
    public int hashCode() {
        return text().hashCode();
    }

    private static void checkCharacters(String part, boolean isQuery) throws InvalidTarget {
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (c == '%') {
                if (i + 2 >= part.length() || hexValue(part.charAt(i + 1)) < 0 || hexValue(part.charAt(i + 2)) < 0) {
                    throw new InvalidTarget("the request target has a '%' that does not start a %HH escape");
                }
                i += 2;
            } else if (!(isUnreserved(c) || PCHAR_PUNCTUATION.indexOf(c) >= 0 || c == '/' || (isQuery && c == '?'))) {
                throw new InvalidTarget("the request target holds a character a URL may not carry (0x"
                        + Integer.toHexString(c) + "): percent-encode it");
            }
        }
    }

    private static boolean isUnreserved(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || UNRESERVED_PUNCTUATION.indexOf(c) >= 0;
    }

    private static int hexValue(char c) {
        return Character.digit(c, 16);
    }

    /** Decodes escapes of unreserved characters; the other escapes get upper-case hex (RFC 3986 section 6.2.2.1–2). */
    private static String normaliseEscapes(String path) {
        if (path.indexOf('%') < 0) {
            return path;
        }
        StringBuilder out = new StringBuilder(path.length());
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c != '%') {
                out.append(c);
                continue;
            }
            int value = hexValue(path.charAt(i + 1)) * 16 + hexValue(path.charAt(i + 2));
            if (isUnreserved((char) value)) {
                out.append((char) value);
            } else {
                out.append('%').append(HEX[value >> 4]).append(HEX[value & 0xf]);
            }
            i += 2;
        }
        return out.toString();
    }

    /** RFC 3986 section 5.2.4 for an absolute path: {@code .} and {@code ..} segments go; the result starts with '/'. */
    private static String removeDotSegments(String path) {
        if (!path.contains(".")) {
            return path;
        }
        String[] segments = path.split("/", -1);
        Deque<String> kept = new ArrayDeque<>();
        for (int i = 1; i < segments.length; i++) {
            String segment = segments[i];
            boolean last = i == segments.length - 1;
            if (segment.equals(".") || segment.equals("..")) {
                if (segment.equals("..") && !kept.isEmpty()) {
                    kept.removeLast();
                }
                if (last) {
                    kept.addLast(""); // "/a/b/.." is the directory "/a/", with its trailing slash
                }
            } else {
                kept.addLast(segment);
            }
        }
        return "/" + String.join("/", kept);
    }

    /** A target mcpd will not take or send, with a one-line reason that quotes nothing a sender wrote. */
    public static final class InvalidTarget extends Exception {
        public InvalidTarget(String reason) {
            super(reason, null, false, false);
        }
    }
}
