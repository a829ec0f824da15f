package dev.mcpd.delivery;

import dev.mcpd.config.Secret;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.wire.RelayBatch;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Turns a spool entry into the request that goes to the HTTP upstream its lane chose: the stored method, content type, content
 * encoding and body bytes unchanged; the entry's {@code Idempotency-Key}; and a credential — the relay's own
 * {@code --upstream-key} as a Bearer token, else the sender's stored {@code Authorization} / {@code x-mcpd-key};
 * and the sender's headers kept to be forwarded ({@code --forward-header}: a tenant's {@code X-Scope-OrgID}, say). No
 * other header goes out: nothing hop-by-hop or Camel-internal, and no inbound header chooses the destination.
 * A batch goes as one request in the relay-batch framing ({@link RelayBatch}): every entry's method, target, content
 * type, content encoding, idempotency key, receive time and body bytes, with the credential its entries share. A
 * merge goes as one OTLP export request ({@link OtlpMerge}). Both are gzip-compressed when that saves a tenth or more.
 */
public final class UpstreamRequest implements Processor {

    /** How delivery names itself in an upstream's access log. */
    static final String USER_AGENT = "mcpd-relay";
    /** How the key of a merged OTLP request begins; a digest of its entries' keys follows. */
    static final String MERGE_KEY_PREFIX = "relay-merge-";
    /** The methods an HTTP client sends. Ingest stores only POST; another is an entry of a damaged or foreign spool. */
    private static final Set<String> SENDABLE = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH",
            "TRACE");

    private final Optional<Secret> upstreamKey;

    public UpstreamRequest(Optional<Secret> upstreamKey) {
        this.upstreamKey = upstreamKey;
    }

    /**
     * Why a lone entry cannot be sent to an HTTP upstream, if it cannot: ingest stores only POST, so another method is
     * an entry of a damaged or foreign spool.
     */
    static Optional<PermanentRefusal> unsendable(SpoolRequest request, String upstream) {
        return SENDABLE.contains(request.method()) ? Optional.empty() : Optional.of(PermanentRefusal.unsendable(upstream,
                "the stored method is not one an HTTP client sends"));
    }

    @Override
    public void process(Exchange exchange) {
        Shipment shipment = DeliveryExchange.shipment(exchange);
        if (shipment.batch()) {
            DeliveryExchange.setRequest(exchange, batch(shipment));
            return;
        }
        if (shipment.merge()) {
            DeliveryExchange.setRequest(exchange, merged(shipment));
            return;
        }
        SpoolRequest request = shipment.first().request();
        MultiMap headers = HttpHeaders.headers().set("User-Agent", USER_AGENT);
        forwarded(headers, request);
        headers.set("Idempotency-Key", request.idempotencyKey());
        credential(headers, request);
        // Content type and encoding exactly as stored: the client neither reformats nor compresses them.
        if (!request.contentType().isEmpty()) {
            headers.set("Content-Type", request.contentType());
        }
        if (!request.contentEncoding().isEmpty()) {
            headers.set("Content-Encoding", request.contentEncoding());
        }
        DeliveryExchange.setRequest(exchange, new OutgoingRequest(HttpMethod.valueOf(request.method()), headers,
                Buffer.buffer(request.body())));
    }

    /** The sender's forwarded headers: those of every entry a batch or merge carries, which share them. */
    private static void forwarded(MultiMap headers, SpoolRequest request) {
        request.forwarded().forEach(header -> headers.set(header.name(), header.value()));
    }

    private void credential(MultiMap headers, SpoolRequest request) {
        if (upstreamKey.isPresent()) {
            headers.set("Authorization", "Bearer " + upstreamKey.get().reveal());
        } else {
            request.credential().ifPresent(c -> headers.set(c.header(), c.value()));
        }
    }

    private OutgoingRequest batch(Shipment shipment) {
        MultiMap headers = HttpHeaders.headers().set("User-Agent", USER_AGENT);
        // The packer put only entries that share a credential and forwarded headers together: the first one's are
        // every one's.
        forwarded(headers, shipment.first().request());
        credential(headers, shipment.first().request());
        byte[] framing = RelayBatch.encode(shipment.entries().stream().map(SpoolEntry::request)
                .map(r -> new RelayBatch.Entry(r.method(), r.target(), r.contentType(), r.contentEncoding(),
                        r.idempotencyKey(), r.receivedAtMillis(), r.body(), forwardedMap(r))).toList());
        headers.set("Content-Type", RelayBatch.CONTENT_TYPE);
        return compressed(headers, framing);
    }

    /**
     * One OTLP export request of the merged entries, with the content type and credential they share and a key of
     * its own: {@code relay-merge-} and a digest of their keys in order, the same for the same entries sent again.
     */
    private OutgoingRequest merged(Shipment shipment) {
        MultiMap headers = HttpHeaders.headers().set("User-Agent", USER_AGENT);
        forwarded(headers, shipment.first().request());
        credential(headers, shipment.first().request());
        headers.set("Idempotency-Key", mergeKey(shipment.entries()));
        headers.set("Content-Type", shipment.first().request().contentType());
        if (!shipment.mergedEncoding().isEmpty()) {
            headers.set("Content-Encoding", shipment.mergedEncoding()); // encoded as its format wants: as it is
            return new OutgoingRequest(HttpMethod.POST, headers, Buffer.buffer(shipment.mergedBody()));
        }
        return compressed(headers, shipment.mergedBody());
    }

    private static Map<String, String> forwardedMap(SpoolRequest request) {
        Map<String, String> headers = new LinkedHashMap<>();
        request.forwarded().forEach(header -> headers.put(header.name(), header.value()));
        return headers;
    }

    static String mergeKey(List<SpoolEntry> entries) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        for (SpoolEntry entry : entries) {
            sha256.update(entry.request().idempotencyKey().getBytes(StandardCharsets.UTF_8));
            sha256.update((byte) '\n');
        }
        return MERGE_KEY_PREFIX + HexFormat.of().formatHex(sha256.digest());
    }

    private static OutgoingRequest compressed(MultiMap headers, byte[] body) {
        Optional<byte[]> gzipped = WireGzip.ifItSavesATenth(body);
        if (gzipped.isPresent()) {
            headers.set("Content-Encoding", "gzip");
        }
        return new OutgoingRequest(HttpMethod.POST, headers, Buffer.buffer(gzipped.orElse(body)));
    }
}
