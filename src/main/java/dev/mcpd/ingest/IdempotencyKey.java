package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.RequestFormat;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.wire.DerivedIdempotencyKey;
import dev.mcpd.wire.SenderIdempotencyKey;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Gives every request the key its upstream deduplicates by, computed once, at accept: the sender's own
 * {@code Idempotency-Key} when it sent one, otherwise one derived from the request target (normalised,
 * {@link IngestTargetCheck}), the content encoding and the body ({@link DerivedIdempotencyKey}), so the same bytes sent
 * again get the same key — over gRPC, those of the equivalent OTLP/HTTP request ({@link RequestFormat}), so an export
 * sent either way gets one key. A sender's key must follow {@link SenderIdempotencyKey}; anything else is refused
 * with 400.
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
            key = DerivedIdempotencyKey.of(IngestTargetCheck.of(exchange).text(),
                    RequestFormat.of(exchange).contentEncoding(), exchange.getIn().getBody(byte[].class));
        }
        IngestExchange.setKey(exchange, key);
    }
}
