package dev.mcpd.http;

import dev.mcpd.config.InternalTuning;
import java.util.Optional;

/**
 * A request the relay (or collector) will not take, with the one answer the sender gets: a status and a one-line
 * reason. Thrown by the ingest steps; answered by {@link RefusalAnswer}. Its {@link Kind} — never its reason, which
 * may quote the request — is what refusals are counted and rate-limited by in the log.
 */
public final class IngestRefusal extends RuntimeException {

    /** What kind of refusal: a closed set, so that no sender can make a new one. */
    public enum Kind {
        BAD_TARGET, BAD_FRAMING, BAD_IDEMPOTENCY_KEY, BAD_WAIT, BAD_CONTENT_LENGTH, BAD_BODY, MALFORMED_BATCH, UNAUTHORIZED,
        FORBIDDEN, NOT_ALLOWED, NOT_FOUND, NOT_IMPLEMENTED, UNSUPPORTED_ENCODING, QUOTA_EXCEEDED, TIMED_OUT, TOO_LARGE, SPOOL_FULL,
        MEMORY_BUSY, UNAVAILABLE, INTERNAL, SENDER_GONE
    }

    /** What every retryable refusal asks: come back later (what OpenTelemetry exporters honour); a fixed setting. */
    public static final int RETRY_AFTER_SECONDS = InternalTuning.DEFAULT.retryAfterSeconds();

    private final int status;
    private final Kind kind;
    private final Optional<Integer> retryAfterSeconds;
    private final boolean bodyUnread;

    private IngestRefusal(int status, Kind kind, String reason, Optional<Integer> retryAfterSeconds,
                          boolean bodyUnread) {
        super(reason, null, false, false);
        this.status = status;
        this.kind = kind;
        this.retryAfterSeconds = retryAfterSeconds;
        this.bodyUnread = bodyUnread;
    }

    /** A malformed request, of the given kind; the body has been read (or there is none left to read). */
    public static IngestRefusal badRequest(Kind kind, String reason) {
        return new IngestRefusal(400, kind, reason, Optional.empty(), false);
    }

    /** A malformed request refused before its body was read: the connection is closed after the answer. */
    public static IngestRefusal badRequestBeforeBody(Kind kind, String reason) {
        return new IngestRefusal(400, kind, reason, Optional.empty(), true);
    }

    public static IngestRefusal unauthorized() {
        return new IngestRefusal(401, Kind.UNAUTHORIZED,
                "missing or wrong ingest key: send Authorization: Bearer KEY or x-mcpd-key: KEY", Optional.empty(),
                true);
    }

    /** Refused by a route (a {@link RouteRefusal}: an operator's, at an extension point). */
    public static IngestRefusal forbidden(String reason) {
        return new IngestRefusal(403, Kind.FORBIDDEN, reason, Optional.empty(), false);
    }

    public static IngestRefusal notAllowed(String reason) {
        return new IngestRefusal(405, Kind.NOT_ALLOWED, reason, Optional.empty(), true);
    }

    public static IngestRefusal notFound(String reason) {
        return new IngestRefusal(404, Kind.NOT_FOUND, reason, Optional.empty(), true);
    }

    /** A gRPC method this process does not serve (gRPC's {@code UNIMPLEMENTED}). */
    public static IngestRefusal notImplemented(String reason) {
        return new IngestRefusal(501, Kind.NOT_IMPLEMENTED, reason, Optional.empty(), true);
    }

    public static IngestRefusal unsupportedEncoding(String reason) {
        return new IngestRefusal(415, Kind.UNSUPPORTED_ENCODING, reason, Optional.empty(), false);
    }

    /** Past a per-minute quota: come back when the minute is over. */
    public static IngestRefusal quotaExceeded(long quota, int secondsLeft) {
        return new IngestRefusal(429, Kind.QUOTA_EXCEEDED, "quota of " + quota + " requests per minute reached;"
                + " retry in " + secondsLeft + " s", Optional.of(secondsLeft), true);
    }

    public static IngestRefusal timedOut(long seconds) {
        return new IngestRefusal(408, Kind.TIMED_OUT, "request body not received within " + seconds + " s",
                Optional.empty(), true);
    }

    public static IngestRefusal tooLarge(long limit) {
        return new IngestRefusal(413, Kind.TOO_LARGE, "request body larger than the limit of " + limit + " bytes",
                Optional.empty(), true);
    }

    /** A body that is larger than the limit once decompressed; it has been read whole. */
    public static IngestRefusal tooLargeDecompressed(long limit) {
        return new IngestRefusal(413, Kind.TOO_LARGE, "request body larger than the limit of " + limit
                + " bytes once decompressed", Optional.empty(), false);
    }

    /** The spool is at its bound: the sender holds the request and retries. */
    public static IngestRefusal spoolFull(boolean bodyUnread) {
        return new IngestRefusal(503, Kind.SPOOL_FULL, "the relay's spool is full; retry later",
                Optional.of(RETRY_AFTER_SECONDS),
                bodyUnread);
    }

    /** The sender should hold the request and try again: nothing of it was kept. */
    public static IngestRefusal unavailable(String reason) {
        return new IngestRefusal(503, Kind.UNAVAILABLE, reason, Optional.of(RETRY_AFTER_SECONDS), false);
    }

    /** As {@link #unavailable}, of a given kind, and before (or while) the body was read. */
    public static IngestRefusal unavailableBeforeBody(Kind kind, String reason) {
        return new IngestRefusal(503, kind, reason, Optional.of(RETRY_AFTER_SECONDS), true);
    }

    /**
     * The sender went away before its request was read (it reset the stream, closed the connection): there is no one
     * to answer; the refusal is only logged (rate-limited) and counted.
     */
    public static IngestRefusal senderGone() {
        return new IngestRefusal(499, Kind.SENDER_GONE, "the sender reset the request or closed the connection before"
                + " its body was read", Optional.empty(), true);
    }

    /** A fault of the process, not of the request: the sender keeps it and retries. */
    public static IngestRefusal internal() {
        return new IngestRefusal(503, Kind.INTERNAL, "internal error; retry later", Optional.of(RETRY_AFTER_SECONDS),
                false);
    }

    public int status() {
        return status;
    }

    public Kind kind() {
        return kind;
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
