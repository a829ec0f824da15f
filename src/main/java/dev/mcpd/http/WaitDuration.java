package dev.mcpd.http;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long a caller may be kept waiting: {@code /relay/sync}'s {@code timeout} and the {@code mcpd-relay-wait} header
 * — a whole number of seconds or milliseconds ({@code 10s}, {@code 500ms}), at most 60 s.
 */
public final class WaitDuration {

    public static final Duration MAX = Duration.ofSeconds(60);
    private static final Pattern FORM = Pattern.compile("([0-9]{1,9})(ms|s)");

    private WaitDuration() {
    }

    /**
     * The duration {@code text} names.
     *
     * @throws IllegalArgumentException with a one-line reason naming {@code what}, when it is malformed or too long
     */
    public static Duration parse(String what, String text) {
        Matcher matcher = FORM.matcher(text.strip());
        if (!matcher.matches()) {
            throw new IllegalArgumentException(what + " must be a duration like 10s or 500ms");
        }
        long amount = Long.parseLong(matcher.group(1));
        Duration duration = matcher.group(2).equals("ms") ? Duration.ofMillis(amount) : Duration.ofSeconds(amount);
        if (duration.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(what + " is at most 60s");
        }
        return duration;
    }
}
