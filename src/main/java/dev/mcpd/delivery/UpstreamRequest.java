package dev.mcpd.delivery;

import dev.mcpd.config.Secret;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import io.vertx.core.buffer.Buffer;
import java.util.Optional;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

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
    /** The methods an HTTP client sends. Ingest stores only POST; another is an entry of a damaged or foreign spool. */
    private static final Set<String> SENDABLE = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH",
            "TRACE");

    private final Optional<Secret> upstreamKey;

    public UpstreamRequest(Optional<Secret> upstreamKey) {
        this.upstreamKey = upstreamKey;
    }

    @Override
    public void process(Exchange exchange) {
        SpoolEntry entry = DeliveryExchange.entry(exchange);
        SpoolRequest request = entry.request();
        if (!SENDABLE.contains(request.method())) {
            throw PermanentRefusal.unsendable(NOT_SENT, "the stored method is not one an HTTP client sends");
        }
        Message out = exchange.getIn();
        out.removeHeaders("*");
        out.setHeader("Idempotency-Key", request.idempotencyKey());
        if (upstreamKey.isPresent()) {
            out.setHeader("Authorization", "Bearer " + upstreamKey.get().reveal());
        } else {
            request.credential().ifPresent(c -> out.setHeader(c.header(), c.value()));
        }
        // Content type and encoding exactly as stored: the client neither reformats nor compresses them.
        if (!request.contentType().isEmpty()) {
            out.setHeader(Exchange.CONTENT_TYPE, request.contentType());
        }
        if (!request.contentEncoding().isEmpty()) {
            out.setHeader("Content-Encoding", request.contentEncoding());
        }
        out.setBody(Buffer.buffer(request.body()));
    }
}
