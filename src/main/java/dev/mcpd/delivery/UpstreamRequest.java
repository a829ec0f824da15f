package dev.mcpd.delivery;

import dev.mcpd.config.Secret;
import dev.mcpd.http.RelayBatch;
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
 * the destination. A batch goes as one request in the relay-batch framing ({@link RelayBatch}): every entry's method,
 * target, content type, content encoding, idempotency key, receive time and body bytes, gzip-compressed when that
 * saves a tenth or more, with the credential its entries share.
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
        Shipment shipment = DeliveryExchange.shipment(exchange);
        if (shipment.batch()) {
            batch(exchange.getIn(), shipment);
            return;
        }
        SpoolRequest request = shipment.first().request();
        if (!SENDABLE.contains(request.method())) {
            throw PermanentRefusal.unsendable(NOT_SENT, "the stored method is not one an HTTP client sends");
        }
        Message out = exchange.getIn();
        out.removeHeaders("*");
        out.setHeader("Idempotency-Key", request.idempotencyKey());
        credential(out, request);
        // Content type and encoding exactly as stored: the client neither reformats nor compresses them.
        if (!request.contentType().isEmpty()) {
            out.setHeader(Exchange.CONTENT_TYPE, request.contentType());
        }
        if (!request.contentEncoding().isEmpty()) {
            out.setHeader("Content-Encoding", request.contentEncoding());
        }
        out.setBody(Buffer.buffer(request.body()));
    }

    private void credential(Message out, SpoolRequest request) {
        if (upstreamKey.isPresent()) {
            out.setHeader("Authorization", "Bearer " + upstreamKey.get().reveal());
        } else {
            request.credential().ifPresent(c -> out.setHeader(c.header(), c.value()));
        }
    }

    private void batch(Message out, Shipment shipment) {
        out.removeHeaders("*");
        // The packer put only entries that share a credential together: the first one's is every one's.
        credential(out, shipment.first().request());
        byte[] framing = RelayBatch.encode(shipment.entries().stream().map(SpoolEntry::request)
                .map(r -> new RelayBatch.Entry(r.method(), r.target(), r.contentType(), r.contentEncoding(),
                        r.idempotencyKey(), r.receivedAtMillis(), r.body())).toList());
        out.setHeader(Exchange.CONTENT_TYPE, RelayBatch.CONTENT_TYPE);
        Optional<byte[]> gzipped = RelayBatch.gzipped(framing);
        if (gzipped.isPresent()) {
            out.setHeader("Content-Encoding", "gzip");
        }
        out.setBody(Buffer.buffer(gzipped.orElse(framing)));
    }
}
