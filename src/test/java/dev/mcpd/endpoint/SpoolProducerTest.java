package dev.mcpd.endpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.delivery.DeliveryWorkers;
import dev.mcpd.delivery.SpoolLanes;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolFullException;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.wire.DerivedIdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code to: spool:relay} writes whatever message it is given, durably, on a real spool. */
class SpoolProducerTest {

    private static final long MAX_BODY = 1024;
    private static final byte[] BODY = "{\"events\":[{\"a\":1}]}".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private Spool spool;
    private final EntryFates fates = new EntryFates();
    private CamelContext camel;
    private ProducerTemplate send;

    private void start(Spool.Options options) throws Exception {
        spool = Spool.open(dir.resolve("spool"), options);
        camel = new DefaultCamelContext();
        camel.addComponent("spool", new SpoolComponent(spool, fates, MAX_BODY,
                new SpoolLanes(new DeliveryWorkers(1), null, null, null, null, null, null)));
        camel.addRoutes(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:in").to("spool:relay");
            }
        });
        camel.start();
        send = camel.createProducerTemplate();
    }

    @AfterEach
    void stop() throws Exception {
        if (camel != null) {
            camel.stop();
        }
        if (spool != null) {
            spool.close();
        }
    }

    private Exchange write(Object body, Map<String, Object> headers) {
        return send.send("direct:in", exchange -> {
            exchange.getIn().setBody(body);
            exchange.getIn().setHeaders(new HashMap<>(headers));
        });
    }

    private SpoolEntry onlyEntry() throws Exception {
        assertEquals(1, spool.entries(), "one entry in the spool");
        return spool.next(Duration.ofSeconds(1)).orElseThrow();
    }

    @Test
    void aSpoolRequestBodyIsWrittenAsItIsAndItsSequenceNumberComesBack() throws Exception {
        start(Spool.Options.unbounded());
        SpoolRequest request = new SpoolRequest("POST", "/v1/traces?tenant=a", "application/x-protobuf", "gzip",
                "sender-key-1", Optional.of(new Credential("Authorization", "Bearer t")), 1_700_000_000_000L, BODY,
                List.of(new ForwardedHeader("X-Scope-OrgID", "team-a")), true);
        Exchange written = write(request, Map.of());
        assertNull(written.getException());
        SpoolEntry entry = onlyEntry();
        assertEquals(entry.seq(), written.getMessage().getHeader(SpoolMessage.SEQ, Long.class));
        assertEquals(request.toString(), entry.request().toString());
        assertEquals(request.credential(), entry.request().credential());
        assertEquals(request.forwarded(), entry.request().forwarded());
        assertArrayEquals(BODY, entry.request().body());
        assertEquals(1_700_000_000_000L, entry.request().receivedAtMillis());
    }

    @Test
    void anyOtherMessageIsAPostOfItsBodyToItsTargetWithItsHeadersAndADerivedKey() throws Exception {
        start(Spool.Options.unbounded());
        Exchange written = write(new String(BODY, StandardCharsets.UTF_8), Map.of(SpoolMessage.TARGET,
                "/v1/x/../logs?tenant=b", "Content-Type", "application/json", "Content-Encoding", "identity"));
        assertNull(written.getException());
        SpoolRequest kept = onlyEntry().request();
        assertEquals("POST", kept.method());
        assertEquals("/v1/logs?tenant=b", kept.target(), "normalised as a sender's target is");
        assertEquals("application/json", kept.contentType());
        assertEquals("identity", kept.contentEncoding());
        assertEquals(DerivedIdempotencyKey.of("/v1/logs?tenant=b", "identity", BODY), kept.idempotencyKey());
        assertEquals(Optional.empty(), kept.credential());
        assertEquals(List.of(), kept.forwarded());
        assertFalse(kept.remoteWrite());
        assertArrayEquals(BODY, kept.body());
        assertEquals(written.getClock().getCreated(), kept.receivedAtMillis());
    }

    @Test
    void itsOwnIdempotencyKeyIsKeptAndARemoteWriteJoinsAnOrderedStream() throws Exception {
        start(Spool.Options.unbounded());
        write(BODY, Map.of(SpoolMessage.TARGET, "/api/v1/write", "Idempotency-Key", "batch-7",
                "X-Prometheus-Remote-Write-Version", "0.1.0"));
        SpoolRequest kept = onlyEntry().request();
        assertEquals("batch-7", kept.idempotencyKey());
        assertTrue(kept.remoteWrite());
        assertEquals("", kept.contentType(), "none was given");
    }

    @Test
    void aMessageThatCannotBeSentUpstreamAsItIsFailsAndNothingIsWritten() throws Exception {
        start(Spool.Options.unbounded());
        Map<String, Map<String, Object>> refused = Map.of(
                "no McpdTarget header", Map.of(),
                "McpdTarget is not a path and query", Map.of(SpoolMessage.TARGET, "http://other/../x y"),
                "Content-Type holds a control character", Map.of(SpoolMessage.TARGET, "/v1/logs",
                        "Content-Type", "text/plain\r\nX-Injected: 1"),
                "Idempotency-Key must be 1 to 255 visible ASCII characters", Map.of(SpoolMessage.TARGET, "/v1/logs",
                        "Idempotency-Key", "two words"));
        refused.forEach((why, headers) -> {
            Exception failure = write(BODY, headers).getException();
            assertInstanceOf(IllegalArgumentException.class, failure, why);
            assertTrue(failure.getMessage().startsWith("spool: cannot write the message: " + why),
                    why + ": " + failure.getMessage());
        });
        Exception tooLarge = write(new byte[(int) MAX_BODY + 1], Map.of(SpoolMessage.TARGET, "/v1/logs"))
                .getException();
        assertTrue(tooLarge.getMessage().contains("past --max-body-bytes (1024)"), tooLarge.getMessage());
        Exception noBody = write(null, Map.of(SpoolMessage.TARGET, "/v1/logs")).getException();
        assertTrue(noBody.getMessage().endsWith("the message has no body"), noBody.getMessage());
        assertEquals(0, spool.entries());
    }

    @Test
    void atTheSpoolsBoundTheExchangeFailsWithSpoolFullAndNothingIsWritten() throws Exception {
        start(Spool.Options.unbounded().withMaxBytes(4 * MAX_BODY));
        Map<String, Object> headers = Map.of(SpoolMessage.TARGET, "/v1/logs");
        byte[] body = new byte[(int) MAX_BODY];
        Exception full = null;
        int written = 0;
        while (full == null && written < 10) {
            full = write(body, headers).getException();
            written += full == null ? 1 : 0;
        }
        assertInstanceOf(SpoolFullException.class, full);
        assertTrue(written >= 2 && written < 4, written + " fit before the bound");
        assertEquals(written, spool.entries(), "the refused one was not kept");
    }

    @Test
    void aWriteThatAwaitsItsFateHasItRegisteredBeforeDeliveryCanTakeTheEntry() throws Exception {
        start(Spool.Options.unbounded());
        Exchange plain = write(BODY, Map.of(SpoolMessage.TARGET, "/v1/logs"));
        assertEquals(Optional.empty(), SpoolMessage.fate(plain));
        Exchange awaiting = send.send("direct:in", exchange -> {
            exchange.getIn().setBody(BODY);
            exchange.getIn().setHeader(SpoolMessage.TARGET, "/v1/logs?second");
            SpoolMessage.awaitFate(exchange);
        });
        long seq = SpoolMessage.seq(awaiting);
        CompletableFuture<EntryFates.Fate> fate = SpoolMessage.fate(awaiting).orElseThrow();
        assertEquals(1, fates.awaited(), "only the one that asked");
        fates.delivered(seq, 200, "application/json", "{}".getBytes(StandardCharsets.UTF_8));
        EntryFates.Fate known = fate.get(5, TimeUnit.SECONDS);
        assertFalse(known.deadLettered());
        assertEquals(200, known.status());
    }
}
