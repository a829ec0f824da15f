package dev.mcpd.delivery;

import dev.mcpd.config.Secret;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.util.Optional;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;
import org.apache.camel.component.http.HttpMethods;

/**
 * Turns a spool entry into the request that goes upstream (SPEC §3–§5): the stored method, content type, content
 * encoding and body bytes unchanged; the entry's {@code Idempotency-Key}; and a credential — the relay's own
 * {@code --upstream-key} as a Bearer token, else the sender's stored {@code Authorization} / {@code x-mcpd-key}.
 * Every other header is dropped first, so nothing hop-by-hop or Camel-internal goes out and no inbound header chooses
 * the destination.
 */
public final class UpstreamRequest implements Processor {

    /** Names no upstream in a dead letter of an entry no request could be made of. */
    static final String NOT_SENT = "(not sent)";

    private final Optional<Secret> upstreamKey;

    public UpstreamRequest(Optional<Secret> upstreamKey) {
        this.upstreamKey = upstreamKey;
    }

    @Override
    public void process(Exchange exchange) {
        SpoolEntry entry = DeliveryExchange.entry(exchange);
        SpoolRequest request = entry.request();
        Message out = exchange.getIn();
        out.removeHeaders("*");
        // camel-http reads this header as its HttpMethods enum: given the String, Camel's enum converter searched the
        // whole converter registry on every request (bench/profile.sh: a quarter of the delivery threads' CPU).
        out.setHeader(Exchange.HTTP_METHOD, methodOf(request));
        out.setHeader("Idempotency-Key", request.idempotencyKey());
        if (upstreamKey.isPresent()) {
            out.setHeader("Authorization", "Bearer " + upstreamKey.get().reveal());
        } else {
            request.credential().ifPresent(c -> out.setHeader(c.header(), c.value()));
        }
        // Content type and encoding travel with the body, exactly as stored (see StoredBody).
        out.setBody(new StoredBody(request.body(), request.contentType(), request.contentEncoding()));
    }

    /** Ingest stores only POST; any other stored method (an entry of a damaged or foreign spool) cannot go out. */
    private static HttpMethods methodOf(SpoolRequest request) {
        try {
            return HttpMethods.valueOf(request.method());
        } catch (IllegalArgumentException e) {
            throw PermanentRefusal.unsendable(NOT_SENT, "the stored method is not one an HTTP client sends");
        }
    }
}
