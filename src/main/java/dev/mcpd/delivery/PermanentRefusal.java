package dev.mcpd.delivery;

import dev.mcpd.spool.DeadLetters;
import dev.mcpd.upstream.Upstream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * Why an entry goes to dead/ rather than to another upstream: an upstream refused it for good (a 4xx other than
 * 408/429, or a Kafka broker's refusal of the record); no request can be made of it at all (a stored target or method
 * that cannot be sent anywhere: the entry's fault, not the upstream's, so no upstream is made to wait for it); or it
 * waited longer than {@code --spool-max-age}.
 */
public final class PermanentRefusal {

    /** How much of the upstream's answer is kept beside a dead letter. */
    static final int ANSWER_HEAD_BYTES = 1024;

    private final String upstream;
    private final int status;
    private final String reason;
    private final byte[] answerHead;
    private final String answerContentType;

    private final boolean expiry;

    private PermanentRefusal(String upstream, int status, String reason, byte[] answerHead, String answerContentType) {
        this(upstream, status, reason, answerHead, answerContentType, false);
    }

    private PermanentRefusal(String upstream, int status, String reason, byte[] answerHead, String answerContentType,
                             boolean expiry) {
        this.expiry = expiry;
        this.upstream = upstream;
        this.status = status;
        this.reason = reason;
        this.answerHead = answerHead;
        this.answerContentType = answerContentType;
    }

    /** The upstream answered the attempt with a permanent refusal. */
    static PermanentRefusal refusedBy(Attempt attempt) {
        return new PermanentRefusal(attempt.upstream().label(), attempt.status().orElse(0),
                "refused with " + attempt.cause(), attempt.answerHead(ANSWER_HEAD_BYTES),
                attempt.contentType() == null ? "" : attempt.contentType());
    }

    /** The upstream refused this one entry of a relay batch for good, with its own status and reason. */
    static PermanentRefusal refusedInBatch(Upstream upstream, int status, String reason) {
        return new PermanentRefusal(upstream.label(), status, "refused with " + status + " in a batch: " + reason,
                reason.getBytes(StandardCharsets.UTF_8), TEXT);
    }

    /** A Kafka broker refused the entry's record for good, for {@code reason} (its own words). */
    static PermanentRefusal refusedByBroker(String upstream, String reason) {
        return new PermanentRefusal(upstream, 0, "refused by the broker: " + reason,
                reason.getBytes(StandardCharsets.UTF_8), TEXT);
    }

    /** No request can be built from the entry for {@code upstream} (a label, or a note when none was chosen). */
    static PermanentRefusal unsendable(String upstream, String why) {
        return new PermanentRefusal(upstream, 0, "unsendable: " + why, why.getBytes(StandardCharsets.UTF_8), TEXT);
    }

    /** The entry waited longer than {@code --spool-max-age}: no upstream refused it, and none waits for it. */
    static PermanentRefusal expired(String reason) {
        return new PermanentRefusal("", 0, reason, reason.getBytes(StandardCharsets.UTF_8), TEXT, true);
    }

    /** Whether this is an expiry rather than a refusal. */
    boolean expiry() {
        return expiry;
    }

    private static final String TEXT = "text/plain; charset=utf-8";

    /** The head of the upstream's answer (or the reason, when there was no answer of its own). */
    byte[] answerHead() {
        return answerHead;
    }

    /** The content type of {@link #answerHead}, or "". */
    String answerContentType() {
        return answerContentType;
    }

    public String upstream() {
        return upstream;
    }

    /** The upstream's status, or 0 when it was never asked. */
    public int status() {
        return status;
    }

    /** One line: why the entry is in dead/. */
    public String reason() {
        return reason;
    }

    /** What dead/ keeps beside the entry. */
    public DeadLetters.Refusal refusal(Instant at) {
        return new DeadLetters.Refusal(upstream, status, at, reason, answerHead);
    }
}
