package dev.mcpd.delivery;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/** Reads a {@code Retry-After} header: delta-seconds ({@code 120}) or an HTTP-date. */
public final class RetryAfter {

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
            try {
                Instant until = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                wait = Duration.between(now, until);
            } catch (DateTimeParseException e) {
                return Optional.empty();
            }
        }
        if (wait.isNegative()) {
            wait = Duration.ZERO;
        }
        return Optional.of(wait.compareTo(LONGEST) > 0 ? LONGEST : wait);
    }
}
