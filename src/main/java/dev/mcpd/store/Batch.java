package dev.mcpd.store;

import java.util.Optional;

/**
 * One ingest request as the collector archives it.
 *
 * @param idempotencyKey   the key it is deduplicated by; empty when the sender gave none (never deduplicated)
 * @param target           path and query
 * @param contentType      as received ("" when none)
 * @param contentEncoding  as received ("" when none)
 * @param receivedAtMillis when it arrived
 * @param events           events accepted: a native batch's JSON objects, or 1 for an OTLP request
 * @param rejected         events rejected: a native batch's entries that are not JSON objects
 * @param body             the body as received, never decoded
 */
public record Batch(Optional<String> idempotencyKey, String target, String contentType, String contentEncoding,
                    long receivedAtMillis, int events, int rejected, byte[] body) {
}
