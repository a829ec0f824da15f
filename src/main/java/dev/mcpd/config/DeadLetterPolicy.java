package dev.mcpd.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What goes to dead/ rather than being sent again: {@code mcpd config}'s {@code dead letters} line.
 *
 * @param retryableStatuses 4xx statuses retried like a 5xx rather than dead-lettered ({@code --retryable-status})
 * @param spoolMaxAge       an entry waiting longer moves to dead/ as expired; empty: nothing expires
 *                          ({@code --spool-max-age})
 */
public record DeadLetterPolicy(Set<Integer> retryableStatuses, Optional<Duration> spoolMaxAge) {

    /** Upper bound of --spool-max-age: a year; longer is surely a slip of the unit. */
    public static final Duration MAX_SPOOL_AGE = Duration.ofDays(366);

    public DeadLetterPolicy {
        Objects.requireNonNull(retryableStatuses, "retryableStatuses");
        Objects.requireNonNull(spoolMaxAge, "spoolMaxAge");
        for (int status : retryableStatuses) {
            OptionValues.check(Options.RETRYABLE_STATUS, () -> checkRetryableStatus(status));
        }
        spoolMaxAge.ifPresent(age -> OptionValues.check(Options.SPOOL_MAX_AGE, () -> checkSpoolMaxAge(age)));
        retryableStatuses = Collections.unmodifiableSet(new TreeSet<>(retryableStatuses));
    }

    static Set<Integer> parseRetryableStatuses(String text) {
        Set<Integer> statuses = new TreeSet<>();
        for (String code : text.split(",")) {
            if (code.isBlank()) {
                continue; // a trailing comma is a slip, not a value
            }
            String digits = code.strip();
            if (!digits.matches("[0-9]{3}")) {
                throw new IllegalArgumentException("\"" + digits + "\" is not an HTTP status: list 4xx codes such as"
                        + " 409,425");
            }
            statuses.add(checkRetryableStatus(Integer.parseInt(digits)));
        }
        if (statuses.isEmpty()) {
            throw new IllegalArgumentException("the list is empty: name 4xx codes such as 409,425");
        }
        return statuses;
    }

    static int checkRetryableStatus(int status) {
        if (status < 400 || status > 499) {
            throw new IllegalArgumentException(status + " is not a 4xx status: 5xx, timeouts and refused connections"
                    + " are always retried; only 4xx can be named");
        }
        if (status == 408 || status == 429) {
            throw new IllegalArgumentException(status + " is always retried already: name other 4xx codes");
        }
        return status;
    }

    static Duration checkSpoolMaxAge(Duration age) {
        if (age.compareTo(Duration.ofSeconds(1)) < 0 || age.compareTo(MAX_SPOOL_AGE) > 0) {
            throw new IllegalArgumentException(DurationText.format(age) + " is out of range: use 1s to 366d");
        }
        return age;
    }

    /** What {@code mcpd config} says of it, for dead letters kept in {@code dead}. */
    String describe(Path dead) {
        TreeSet<Integer> retried = new TreeSet<>(retryableStatuses);
        retried.add(408);
        retried.add(429);
        return "4xx answers (but " + retried.stream().map(String::valueOf).collect(Collectors.joining(", "))
                + ") kept in " + dead + "; " + spoolMaxAge.map(age -> "entries waiting over "
                + DurationText.format(age) + " expire into it").orElse("nothing expires");
    }
}
