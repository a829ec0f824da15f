package dev.mcpd.ingest;

import java.util.Optional;

/**
 * A request the relay (or collector) will not take, with the one answer the sender gets: a status and a one-line
 * reason. Thrown by the ingest steps; answered by {@link RefusalAnswer}.
 */
public final class IngestRefusal extends RuntimeException {

    private final int status;
    private final Optional<Integer> retryAfterSeconds;
    private final boolean bodyUnread;

    private IngestRefusal(int status, String reason, Optional<Integer> retryAfterSeconds, boolean bodyUnread) {
        super(reason, null, false, false);
        this.status = status;
        this.retryAfterSeconds = retryAfterSeconds;
        this.bodyUnread = bodyUnread;
    }

    public static IngestRefusal badRequest(String reason) {
        return new IngestRefusal(400, reason, Optional.empty(), false);
    }

    public static IngestRefusal unauthorized() {
        return new IngestRefusal(401, "missing or wrong ingest key: send Authorization: Bearer KEY or x-mcpd-key: KEY",
                Optional.empty(), true);
    }

    /** Refused by an operator's route (an {@link OperatorRefusal}). */
    public static IngestRefusal forbidden(String reason) {
        return new IngestRefusal(403, reason, Optional.empty(), false);
    }

    public static IngestRefusal notAllowed(String reason) {
        return new IngestRefusal(405, reason, Optional.empty(), true);
    }

    public static IngestRefusal notFound(String reason) {
        return new IngestRefusal(404, reason, Optional.empty(), true);
    }

    public static IngestRefusal unsupportedEncoding(String reason) {
        return new IngestRefusal(415, reason, Optional.empty(), false);
    }

    /** Past a per-minute quota: come back when the minute is over (SPEC §8). */
    public static IngestRefusal quotaExceeded(long quota, int secondsLeft) {
        return new IngestRefusal(429, "quota of " + quota + " requests per minute reached; retry in " + secondsLeft
                + " s", Optional.of(secondsLeft), true);
    }

    public static IngestRefusal timedOut(long seconds) {
        return new IngestRefusal(408, "request body not received within " + seconds + " s", Optional.empty(), true);
    }

    public static IngestRefusal tooLarge(long limit) {
        return new IngestRefusal(413, "request body larger than the limit of " + limit + " bytes", Optional.empty(),
                true);
    }

    /** The spool is at its bound: the sender holds the request and retries (SPEC §6). */
    public static IngestRefusal spoolFull(boolean bodyUnread) {
        return new IngestRefusal(503, "the relay's spool is full; retry later", Optional.of(5), bodyUnread);
    }

    /** The sender should hold the request and try again: nothing of it was kept. */
    public static IngestRefusal unavailable(String reason, int retryAfterSeconds) {
        return new IngestRefusal(503, reason, Optional.of(retryAfterSeconds), false);
    }

    public int status() {
        return status;
    }

    public String reason() {
        return getMessage();
    }

    public Optional<Integer> retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** True when part of the body may still be on the connection: it is then closed after the answer. */
    public boolean bodyUnread() {
        return bodyUnread;
    }
}
