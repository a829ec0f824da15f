package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.RequestFormat;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.wire.SenderIdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Gives every request the key its upstream deduplicates by, computed once, at accept: the sender's own
 * {@code Idempotency-Key} when it sent one, otherwise {@code relay-} + hex SHA-256 of the request target (normalised, {@link IngestTargetCheck}), the content
 * encoding and the body, so the same bytes sent again get the same key — over gRPC, those of the equivalent OTLP/HTTP
 * request ({@link RequestFormat}), so an export sent either way gets one key. The fields are separated by a NUL byte, which
 * none of the first two can contain, so two different requests cannot hash the same input.
 *
 * <p>The target includes the query: two requests that differ only in their query are different requests.
 * A sender's key must follow {@link SenderIdempotencyKey}; anything else is refused with 400.
 */
public final class IdempotencyKey implements Processor {

    @Override
    public void process(Exchange exchange) {
        var request = VertxExchange.request(exchange);
        String senderKey = request.getHeader(SenderIdempotencyKey.HEADER);
        String key;
        if (senderKey != null) {
            if (!SenderIdempotencyKey.isValid(senderKey)) {
                throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_IDEMPOTENCY_KEY, SenderIdempotencyKey.RULE);
            }
            key = senderKey;
        } else {
            key = derive(IngestTargetCheck.of(exchange).text(), RequestFormat.of(exchange).contentEncoding(),
                    exchange.getIn().getBody(byte[].class));
        }
        IngestExchange.setKey(exchange, key);
    }

    /** The key the relay gives a request that came without one. */
    public static String derive(String target, String contentEncoding, byte[] body) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        sha256.update(target.getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);
        sha256.update(contentEncoding.getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);
        sha256.update(body);
        return "relay-" + HexFormat.of().formatHex(sha256.digest());
    }
}
