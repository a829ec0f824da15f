package dev.mcpd.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.delivery.DeliveryWorkers;
import dev.mcpd.delivery.SpoolLanes;
import dev.mcpd.endpoint.SpoolComponent;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.camel.CamelContext;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Replayed dead letters are written through the spool endpoint, as a sender's request is, and wait when it is full. */
class ReplayIntakeTest {

    private static final long NOW = 1_800_000_000_000L;
    private static final byte[] BODY = new byte[600];

    @TempDir
    Path dir;

    private Spool spool;
    private CamelContext camel;

    @AfterEach
    void stop() throws Exception {
        if (camel != null) {
            camel.stop();
        }
        if (spool != null) {
            spool.close();
        }
    }

    /** Three dead letters of {@link #BODY} each, handed over by {@code dead replay}; the relay's spool bounded. */
    private ReplayIntake threeHandedOver(long spoolMaxBytes) throws Exception {
        try (Spool first = Spool.open(dir)) {
            DeadLetters dead = new DeadLetters(dir);
            for (int i = 1; i <= 3; i++) {
                first.append(new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-" + i,
                        Optional.of(new Credential("x-mcpd-key", "secret")), 1L, BODY)).get(10, TimeUnit.SECONDS);
                SpoolEntry entry = first.next(Duration.ofSeconds(1)).orElseThrow();
                dead.keep(entry, new DeadLetters.Refusal("http://up", 400, Instant.now(), "refused", new byte[0]));
                first.done(entry.seq());
            }
            ReplayInbox inbox = new ReplayInbox(dir);
            assertEquals(3, inbox.replay(dead, Optional.empty(), Long.MAX_VALUE).handedOver().size());
        }
        spool = Spool.open(dir, Spool.Options.unbounded().withMaxBytes(spoolMaxBytes));
        camel = new DefaultCamelContext();
        camel.addComponent("spool", new SpoolComponent(spool, new EntryFates(), 1 << 20,
                new SpoolLanes(new DeliveryWorkers(1), null, null, null, null, null, null)));
        camel.start();
        return new ReplayIntake(new ReplayInbox(dir), "spool:relay", InstantSource.fixed(Instant.ofEpochMilli(NOW)));
    }

    private List<SpoolEntry> spooled() throws Exception {
        List<SpoolEntry> entries = new ArrayList<>();
        for (Optional<SpoolEntry> next = spool.next(Duration.ZERO); next.isPresent();
             next = spool.next(Duration.ZERO)) {
            entries.add(next.get());
        }
        return entries;
    }

    @Test
    void eachWaitingDeadLetterIsWrittenThroughTheEndpointWithItsKeyCredentialAndANewReceiveTime() throws Exception {
        ReplayIntake intake = threeHandedOver(Long.MAX_VALUE);
        intake.process(new DefaultExchange(camel));
        List<SpoolEntry> entries = spooled();
        assertEquals(List.of("key-1", "key-2", "key-3"),
                entries.stream().map(e -> e.request().idempotencyKey()).toList(), "oldest first");
        assertTrue(entries.stream().allMatch(e -> e.request().receivedAtMillis() == NOW
                && e.request().credential().equals(Optional.of(new Credential("x-mcpd-key", "secret")))));
        assertEquals(0, new ReplayInbox(dir).waiting().entries(), "none waits any more");
        assertEquals(entries.get(0).seq(), new ReplayInbox(dir).takenAs(1).orElseThrow(), "the receipt names it");
        intake.process(new DefaultExchange(camel));
        assertEquals(List.of(), spooled(), "taken once");
    }

    @Test
    void whatDoesNotFitTheSpoolsBoundWaitsForRoomAndIsTakenOnceThereIsSome() throws Exception {
        ReplayIntake intake = threeHandedOver(2 * BODY.length + 400);
        intake.process(new DefaultExchange(camel));
        List<SpoolEntry> first = spooled();
        assertTrue(first.size() >= 1 && first.size() < 3, first.size() + " fit");
        assertEquals(3 - first.size(), new ReplayInbox(dir).waiting().entries(), "the rest wait in replay/");
        for (SpoolEntry entry : first) {
            spool.done(entry.seq());
        }
        intake.process(new DefaultExchange(camel));
        intake.process(new DefaultExchange(camel));
        assertEquals(0, new ReplayInbox(dir).waiting().entries());
        List<String> rest = new ArrayList<>();
        for (int i = first.size() + 1; i <= 3; i++) {
            rest.add("key-" + i);
        }
        assertEquals(rest, spooled().stream().map(e -> e.request().idempotencyKey()).toList(), "in order");
    }
}
