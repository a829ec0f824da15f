package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.Secret;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.wire.RelayBatch;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The request made for an HTTP upstream: the stored bytes and content headers unchanged, the entry's key, one
 * credential, the forwarded headers — and nothing else; a relay batch in its framing; a merge with a key of its own.
 */
class UpstreamRequestTest {

    private static final CamelContext CONTEXT = new DefaultCamelContext();
    private static final Optional<Credential> SENDER = Optional.of(new Credential("Authorization", "Bearer sender"));

    @AfterAll
    static void close() throws Exception {
        CONTEXT.close();
    }

    private static SpoolEntry entry(long seq, String encoding, String body) {
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/logs?x=1", "application/json", encoding, "key-" + seq,
                SENDER, 1_700_000_000_000L + seq, body.getBytes(StandardCharsets.UTF_8),
                List.of(new ForwardedHeader("X-Scope-OrgID", "tenant-1")), false));
    }

    private static OutgoingRequest made(UpstreamRequest maker, Shipment shipment) {
        Exchange exchange = new DefaultExchange(CONTEXT);
        exchange.getIn().setHeader("X-Injected", "from the route");
        DeliveryExchange.setShipment(exchange, shipment);
        maker.process(exchange);
        return DeliveryExchange.request(exchange);
    }

    @Test
    void aLoneEntryGoesAsStoredWithItsKeyItsSendersCredentialAndItsForwardedHeadersOnly() {
        OutgoingRequest request = made(new UpstreamRequest(Optional.empty()), Shipment.single(entry(1, "gzip",
                "{\"a\":1}")));
        assertEquals("POST", request.method().name());
        assertEquals("key-1", request.headers().get("Idempotency-Key"));
        assertEquals("Bearer sender", request.headers().get("Authorization"));
        assertEquals("tenant-1", request.headers().get("X-Scope-OrgID"));
        assertEquals("application/json", request.headers().get("Content-Type"));
        assertEquals("gzip", request.headers().get("Content-Encoding"), "encoded as the sender encoded it");
        assertEquals(UpstreamRequest.USER_AGENT, request.headers().get("User-Agent"));
        assertNull(request.headers().get("X-Injected"), "no header of the exchange goes out");
        assertEquals(6, request.headers().size());
        assertEquals("{\"a\":1}", request.body().toString(StandardCharsets.UTF_8));
    }

    @Test
    void theRelaysOwnKeyReplacesTheSendersCredential() {
        OutgoingRequest request = made(new UpstreamRequest(Optional.of(Secret.of("relay-key"))),
                Shipment.single(entry(1, "", "{}")));
        assertEquals("Bearer relay-key", request.headers().get("Authorization"));
        assertEquals(1, request.headers().getAll("Authorization").size());
    }

    @Test
    void aBatchCarriesEveryEntryInItsFramingWithTheCredentialAndHeadersTheyShare() throws Exception {
        OutgoingRequest request = made(new UpstreamRequest(Optional.empty()), Shipment.batchOf(List.of(
                entry(1, "", "{\"n\":1}"), entry(2, "", "{\"n\":2}"))));
        assertEquals(RelayBatch.CONTENT_TYPE, request.headers().get("Content-Type"));
        assertEquals("Bearer sender", request.headers().get("Authorization"));
        assertEquals("tenant-1", request.headers().get("X-Scope-OrgID"));
        assertFalse(request.headers().contains("Idempotency-Key"), "each entry carries its own");
        List<RelayBatch.Entry> entries = RelayBatch.decode(request.body().getBytes(),
                request.headers().get("Content-Encoding"), RelayBatch.FRAMING_ALLOWANCE);
        assertEquals(List.of("key-1", "key-2"), entries.stream().map(RelayBatch.Entry::idempotencyKey).toList());
        assertArrayEquals("{\"n\":2}".getBytes(StandardCharsets.UTF_8), entries.get(1).body());
        assertEquals("tenant-1", entries.get(0).headers().get("X-Scope-OrgID"));
        long heldAtMost = System.currentTimeMillis() - 1_700_000_000_001L;
        assertTrue(entries.get(0).heldMillis() > heldAtMost - 60_000 && entries.get(0).heldMillis() <= heldAtMost,
                "each entry says how long the relay held it (by its clock, now less its receive time): "
                        + entries.get(0).heldMillis());
    }

    @Test
    void aMergeHasAKeyOfItsOwnTheSameForTheSameEntriesSentAgain() {
        List<SpoolEntry> entries = List.of(entry(1, "", "{}"), entry(2, "", "{}"));
        OutgoingRequest once = made(new UpstreamRequest(Optional.empty()), Shipment.mergeOf(entries,
                "{\"resourceLogs\":[]}".getBytes(StandardCharsets.UTF_8)));
        OutgoingRequest again = made(new UpstreamRequest(Optional.empty()), Shipment.mergeOf(entries,
                "{\"resourceLogs\":[]}".getBytes(StandardCharsets.UTF_8)));
        String key = once.headers().get("Idempotency-Key");
        assertTrue(key.startsWith(UpstreamRequest.MERGE_KEY_PREFIX), key);
        assertEquals(key, again.headers().get("Idempotency-Key"));
        assertFalse(key.equals(UpstreamRequest.mergeKey(List.of(entries.get(1), entries.get(0)))),
                "another order is another request");
    }

    @Test
    void aMethodNoHttpClientSendsCannotBeSent() {
        SpoolRequest odd = new SpoolRequest("BREW", "/v1/logs", "", "", "k", Optional.empty(), 0, new byte[0]);
        assertEquals("unsendable: the stored method is not one an HTTP client sends",
                UpstreamRequest.unsendable(odd, "eu").orElseThrow().reason());
        assertTrue(UpstreamRequest.unsendable(entry(1, "", "{}").request(), "eu").isEmpty());
    }
}
