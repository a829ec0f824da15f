package dev.mcpd.wire;

import dev.mcpd.config.DurationText;
import dev.mcpd.config.InternalTuning;
import java.time.Duration;

/**
 * How long a caller may be kept waiting: {@code /relay/sync}'s {@code timeout} and the {@code mcpd-relay-wait} header
 * — a duration as every option takes one ({@code 500ms}, {@code 10s}, {@code 1m}: {@link DurationText}), at most
 * {@link InternalTuning#maxWait()}.
 */
public final class WaitDuration {

    public static final Duration MAX = InternalTuning.DEFAULT.maxWait();

    private WaitDuration() {
    }

    /**
     * The duration {@code text} names.
     *
     * @throws IllegalArgumentException with a one-line reason naming {@code what}, when it is malformed or too long
     */
    public static Duration parse(String what, String text) {
        Duration duration;
        try {
            duration = DurationText.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " must be a duration like 500ms, 10s or 1m");
        }
        if (duration.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(what + " is at most 60s");
        }
        return duration;
    }
}
