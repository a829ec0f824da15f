package dev.mcpd.spool;

import java.time.Instant;
import java.util.Optional;

/**
 * What is kept about one entry in dead/, as {@code mcpd relay dead list} and {@code show} print it.
 *
 * @param seq            the entry's sequence number when it was refused
 * @param refusedAt      when it was moved to dead/
 * @param upstream       the upstream that refused it ("" when none was asked: expired, unsendable)
 * @param status         the upstream's status, or 0 when it was never sent
 * @param reason         why, in one line ({@code refused with 400}, {@code expired: …})
 * @param answer         the first KiB of the upstream's answer (or the reason, when there was no answer)
 * @param method         the stored request's method
 * @param target         its stored target
 * @param contentType    its content type ("" when none)
 * @param contentEncoding its content encoding ("" when none)
 * @param idempotencyKey the key it is delivered with, and replayed with
 * @param receivedAt     when the relay received it (or took it back by a replay)
 * @param bytes          its body's size
 * @param credential     whether a sender credential is kept with it (never shown)
 * @param damaged        why its entry cannot be read (the request's fields are then empty), if it cannot
 */
public record DeadLetter(long seq, Instant refusedAt, String upstream, int status, String reason, String answer,
                         String method, String target, String contentType, String contentEncoding,
                         String idempotencyKey, Instant receivedAt, long bytes, boolean credential,
                         Optional<String> damaged) {

    /** Expired entries carry this reason's prefix ({@code --spool-max-age}). */
    public static final String EXPIRED = "expired";

    /** The first line of the answer, for one-line listings. */
    public String answerFirstLine() {
        int end = answer.indexOf('\n');
        return (end < 0 ? answer : answer.substring(0, end)).strip();
    }

    public boolean expired() {
        return reason.startsWith(EXPIRED);
    }
}
