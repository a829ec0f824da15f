package dev.mcpd.logs;

import java.util.Locale;

/**
 * Text a sender wrote (a path, a header value), made fit for a log line: at most {@value #MAX_CHARS} characters, and
 * every character outside printable ASCII written as a hexadecimal escape (backslash, {@code x}, two digits; or
 * backslash, {@code u}, four digits), so a sender can neither forge a line, nor colour a terminal, nor fill the log
 * with one request.
 */
public final class SenderText {

    static final int MAX_CHARS = 200;

    private SenderText() {
    }

    public static String quote(String text) {
        if (text == null) {
            return "-";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_CHARS) + 16);
        int shown = Math.min(text.length(), MAX_CHARS);
        for (int i = 0; i < shown; i++) {
            char c = text.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
                out.append(c);
            } else if (c == '\\' || c == '"') {
                out.append('\\').append(c);
            } else if (c < 0x100) {
                out.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
            } else {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            }
        }
        if (text.length() > shown) {
            out.append("…(").append(text.length() - shown).append(" more)");
        }
        return out.toString();
    }
}
