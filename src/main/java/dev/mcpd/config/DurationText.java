package dev.mcpd.config;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An operator's duration: a whole number and one unit, {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}
 * ({@code 90s}, {@code 15m}, {@code 7d}) — what {@code --spool-max-age} and {@code dead purge --older-than} take.
 */
public final class DurationText {

    private static final Pattern FORM = Pattern.compile("([0-9]{1,9})(ms|s|m|h|d)");

    private DurationText() {
    }

    /** The duration {@code text} names; an {@link IllegalArgumentException} with a one-line reason when malformed. */
    public static Duration parse(String text) {
        Matcher matcher = FORM.matcher(text.strip().toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw new IllegalArgumentException("\"" + text + "\" is not a duration: use a whole number and a unit,"
                    + " like 90s, 15m, 24h or 7d");
        }
        long amount = Long.parseLong(matcher.group(1));
        return switch (matcher.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }

    /** The shortest exact text for {@code duration}, in the form {@link #parse} reads ({@code 2s}, {@code 7d}). */
    public static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 86_400_000 == 0 && millis > 0) {
            return millis / 86_400_000 + "d";
        }
        if (millis % 3_600_000 == 0 && millis > 0) {
            return millis / 3_600_000 + "h";
        }
        if (millis % 60_000 == 0 && millis > 0) {
            return millis / 60_000 + "m";
        }
        if (millis % 1000 == 0) {
            return millis / 1000 + "s";
        }
        return millis + "ms";
    }
}
