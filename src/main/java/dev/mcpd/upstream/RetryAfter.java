package dev.mcpd.upstream;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Reads a {@code Retry-After} header: delta-seconds ({@code 120}) or an HTTP-date. */
public final class RetryAfter {

    /**
     * The three HTTP-date forms a recipient must accept (RFC 9110 section 5.6.7): IMF-fixdate / RFC 1123, the obsolete
     * RFC 850 form, and asctime.
     */
    private static final List<DateTimeFormatter> HTTP_DATES = List.of(
            DateTimeFormatter.RFC_1123_DATE_TIME,
            DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss zzz", Locale.US),
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC));

    /** A longer wait is taken as a misconfigured upstream and cut to this, so it cannot stall delivery for days. */
    public static final Duration LONGEST = Duration.ofHours(1);

    private RetryAfter() {
    }

    /** How long from {@code now} the header asks to wait; empty when absent or unreadable. */
    public static Optional<Duration> parse(String header, Instant now) {
        if (header == null || header.isBlank()) {
            return Optional.empty();
        }
        String value = header.trim();
        Duration wait;
        if (value.chars().allMatch(Character::isDigit)) {
            try {
                wait = Duration.ofSeconds(Long.parseLong(value));
            } catch (NumberFormatException | ArithmeticException e) {
                wait = LONGEST;
            }
        } else {
            Optional<Instant> until = httpDate(value);
            if (until.isEmpty()) {
                return Optional.empty();
            }
            wait = Duration.between(now, until.get());
        }
        if (wait.isNegative()) {
            wait = Duration.ZERO;
        }
        return Optional.of(wait.compareTo(LONGEST) > 0 ? LONGEST : wait);
    }

    private static Optional<Instant> httpDate(String value) {
        for (DateTimeFormatter format : HTTP_DATES) {
            try {
                return Optional.of(ZonedDateTime.parse(value, format).toInstant());
            } catch (DateTimeParseException e) {
                // try the next form
            }
        }
        return Optional.empty();
    }
}
