package dev.mcpd.spool;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the spool keeps of one accepted request: everything delivery needs to send it again, byte for byte.
 *
 * @param method           HTTP method, as received (normally POST)
 * @param target           path and query, as received (the request target)
 * @param contentType      the Content-Type header, or "" when the sender sent none
 * @param contentEncoding  the Content-Encoding header, or "" — the body is never decoded
 * @param idempotencyKey   the key the upstream deduplicates by
 * @param credential       the sender's credential, kept only when it must be passed on
 * @param receivedAtMillis when the relay received it, epoch milliseconds
 * @param body             the body bytes exactly as received
 * @param forwarded        the sender's headers kept to be sent with it ({@code --forward-header}), in the order named
 * @param remoteWrite      it came with {@code X-Prometheus-Remote-Write-Version}: it belongs to an ordered stream
 *                         whatever its path (unless ordering is off)
 */
public record SpoolRequest(String method, String target, String contentType, String contentEncoding,
                           String idempotencyKey, Optional<Credential> credential, long receivedAtMillis, byte[] body,
                           List<ForwardedHeader> forwarded, boolean remoteWrite) {

    public SpoolRequest {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(contentEncoding, "contentEncoding");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(credential, "credential");
        Objects.requireNonNull(body, "body");
        forwarded = List.copyOf(forwarded);
    }

    /** A request with no forwarded header, not a Prometheus remote write. */
    public SpoolRequest(String method, String target, String contentType, String contentEncoding,
                        String idempotencyKey, Optional<Credential> credential, long receivedAtMillis, byte[] body) {
        this(method, target, contentType, contentEncoding, idempotencyKey, credential, receivedAtMillis, body,
                List.of(), false);
    }

    /** The same request, received again at {@code receivedAtMillis} (a replayed dead letter). */
    public SpoolRequest receivedAgainAt(long receivedAtMillis) {
        return new SpoolRequest(method, target, contentType, contentEncoding, idempotencyKey, credential,
                receivedAtMillis, body, forwarded, remoteWrite);
    }

    @Override
    public String toString() {
        return "SpoolRequest[" + method + " " + target + ", " + body.length + " bytes, key " + idempotencyKey
                + (credential.isPresent() ? ", with credential" : "") + (forwarded.isEmpty() ? ""
                : ", forwarding " + forwarded.size() + " header(s)") + (remoteWrite ? ", remote write" : "") + "]";
    }
}
