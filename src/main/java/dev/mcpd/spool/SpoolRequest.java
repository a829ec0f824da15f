package dev.mcpd.spool;

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
 */
public record SpoolRequest(String method, String target, String contentType, String contentEncoding,
                           String idempotencyKey, Optional<Credential> credential, long receivedAtMillis, byte[] body) {

    public SpoolRequest {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(contentEncoding, "contentEncoding");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(credential, "credential");
        Objects.requireNonNull(body, "body");
    }

    @Override
    public String toString() {
        return "SpoolRequest[" + method + " " + target + ", " + body.length + " bytes, key " + idempotencyKey
                + (credential.isPresent() ? ", with credential" : "") + "]";
    }
}
