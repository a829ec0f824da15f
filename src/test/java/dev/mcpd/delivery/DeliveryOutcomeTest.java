package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamView;
import dev.mcpd.upstream.UpstreamWindow;
import java.net.ConnectException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * What one answer means, decided in one place, without Camel: each entry's fate, and what the upstream's state on
 * the board and its window make of it — for a lone entry, a relay batch and a merged OTLP request alike.
 */
class DeliveryOutcomeTest {

    private static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");
    private static final Duration LATENCY = Duration.ofMillis(12);

    private final UpstreamBoard board = new UpstreamBoard(List.of(URI.create("http://eu:4318")),
            UpstreamBoard.Settings.defaults(new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), () -> 0.5)),
            InstantSource.fixed(NOW));
    private final Upstream eu = board.upstreams().get(0);
    private final EntryFates fates = new EntryFates();
    private final EntryRecords attempts = new EntryRecords(seq -> true, InstantSource.fixed(NOW));
    private final RejectedItems rejected = new RejectedItems(1);
    private final DeliveryOutcome outcomes = new DeliveryOutcome(board, AnswerPolicy.standard(false), fates, rejected,
            attempts, InstantSource.fixed(NOW));

    private static SpoolEntry entry(long seq) {
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/ingest", "application/json", "", "k" + seq,
                Optional.empty(), NOW.toEpochMilli(), ("{\"n\":" + seq + "}").getBytes(StandardCharsets.UTF_8)));
    }

    private static List<SpoolEntry> entries(int count) {
        return LongStream.rangeClosed(1, count).mapToObj(DeliveryOutcomeTest::entry).toList();
    }

    private static UpstreamAnswer status(int status, String body) {
        return new UpstreamAnswer(status, "application/json", null, body.getBytes(StandardCharsets.UTF_8), null);
    }

    private ShipmentOutcome answer(Shipment shipment, UpstreamAnswer answer) {
        UpstreamWindow.Slot slot = board.window(eu).acquire().orElseThrow();
        return outcomes.answered(shipment, eu, slot, answer, LATENCY);
    }

    private UpstreamView view() {
        return board.views().get(0);
    }

    @Test
    void aTwoHundredDeliversTheEntryAndTellsTheSenderWhoWaitsForIt() throws Exception {
        CompletableFuture<EntryFates.Fate> waiting = fates.expect(1);
        ShipmentOutcome outcome = answer(Shipment.single(entry(1)), status(200, "{\"accepted\":1}"));
        assertEquals(1, outcome.delivered().size());
        assertEquals(200, outcome.delivered().get(0).status());
        assertEquals(Optional.of(eu), outcome.upstream());
        assertFalse(outcome.upstreamFailed());
        assertEquals("{\"accepted\":1}", new String(waiting.get().body(), StandardCharsets.UTF_8));
        assertEquals(1, view().answers().delivered());
        assertEquals(0, view().traffic().inFlight(), "its place in the window is given back");
    }

    @Test
    void aPermanentRefusalOfALoneEntrySendsItToDeadWithTheAnswerAndTheUpstreamDoesNotWait() {
        ShipmentOutcome outcome = answer(Shipment.single(entry(1)), status(422, "{\"error\":\"bad\"}"));
        assertEquals(1, outcome.deadLettered().size());
        PermanentRefusal why = outcome.deadLettered().get(0).why();
        assertEquals(422, why.status());
        assertEquals("refused with 422", why.reason());
        assertArrayEquals("{\"error\":\"bad\"}".getBytes(StandardCharsets.UTF_8), why.answerHead());
        assertEquals(1, view().answers().failedAttempts());
        assertTrue(view().waiting().isEmpty());
    }

    @Test
    void aRetryableAnswerGivesTheEntriesBackAndTheUpstreamWaitsWhatItAskedFor() {
        ShipmentOutcome outcome = answer(Shipment.single(entry(1)),
                new UpstreamAnswer(503, "text/plain", "7", new byte[0], null));
        assertTrue(outcome.upstreamFailed());
        assertEquals(1, outcome.givenBack().size());
        assertEquals(ShipmentOutcome.AS_PACKED, outcome.givenBack().get(0).sendAtMost());
        assertEquals(Optional.of(NOW.plusSeconds(7)), view().waiting().map(w -> w.until()));
        assertEquals("upstream=http://eu:4318 503", attempts.oldest(1).get(0).lastFailure());
    }

    @Test
    void aRefusedConnectionMakesTheUpstreamWaitABackoffAndLeavesItsWindowAsItWas() {
        int window = view().traffic().window();
        ShipmentOutcome outcome = answer(Shipment.single(entry(1)),
                UpstreamAnswer.failed(new ConnectException("Connection refused")));
        assertTrue(outcome.upstreamFailed());
        assertEquals(Optional.of(NOW.plusMillis(500)), view().waiting().map(w -> w.until()),
                "half of the first backoff ceiling (the random draw is 0.5)");
        assertEquals(window, view().traffic().window());
        assertEquals(0, view().traffic().inFlight());
    }

    @Test
    void eachEntryOfABatchGetsItsOwnFateFromItsOwnStatus() {
        Shipment batch = Shipment.batchOf(entries(3));
        ShipmentOutcome outcome = answer(batch, status(200, "{\"entries\":[{\"status\":200,\"accepted\":1},"
                + "{\"status\":400,\"reason\":\"not JSON\"},{\"status\":503,\"reason\":\"store busy\"}]}"));
        assertEquals(List.of(1L), outcome.delivered().stream().map(d -> d.entry().seq()).toList());
        assertEquals(List.of(2L), outcome.deadLettered().stream().map(d -> d.entry().seq()).toList());
        assertEquals("refused with 400 in a batch: not JSON", outcome.deadLettered().get(0).why().reason());
        assertEquals(List.of(3L), outcome.givenBack().stream().map(d -> d.entry().seq()).toList());
        assertFalse(outcome.upstreamFailed(), "the batch as a whole was taken");
        assertEquals(1, view().answers().delivered());
        assertEquals(2, view().answers().failedAttempts(), "the refused entry and the one to send again");
        assertTrue(view().waiting().isPresent(), "an entry answered 503 makes the upstream wait, as alone");
    }

    @Test
    void aBatchTakenWithoutAnAnswerForEachEntryIsSentAgainElsewhere() {
        ShipmentOutcome outcome = answer(Shipment.batchOf(entries(2)), status(200, "{}"));
        assertTrue(outcome.upstreamFailed());
        assertEquals(2, outcome.givenBack().size());
        assertEquals("a 2xx to the batch without an answer for each entry", view().waiting().orElseThrow().cause());
    }

    @Test
    void aBatchRefusedAsAWholeSendsEachEntryAloneAndNoneToDead() {
        ShipmentOutcome outcome = answer(Shipment.batchOf(entries(3)), status(413, "too large"));
        assertEquals(3, outcome.givenBack().size());
        assertTrue(outcome.givenBack().stream().allMatch(back -> back.sendAtMost() == 1));
        assertTrue(outcome.deadLettered().isEmpty());
        assertTrue(view().waiting().isEmpty());
    }

    @Test
    void aRefusedMergeIsTriedInHalvesAndARefusedCredentialSendsEachAlone() {
        Shipment merge = Shipment.mergeOf(entries(4), new byte[] {1});
        ShipmentOutcome halves = answer(merge, status(400, "bad"));
        assertTrue(halves.givenBack().stream().allMatch(back -> back.sendAtMost() == 2));
        ShipmentOutcome alone = answer(merge, status(401, "who?"));
        assertTrue(alone.givenBack().stream().allMatch(back -> back.sendAtMost() == 1));
    }

    @Test
    void aRequestTheClientCouldNotMakeIsTheEntrysFault() {
        IllegalArgumentException unbuilt = new IllegalArgumentException("bad header");
        ShipmentOutcome lone = answer(Shipment.single(entry(1)), UpstreamAnswer.failed(unbuilt));
        assertTrue(lone.deadLettered().get(0).why().reason().startsWith("unsendable: "));
        ShipmentOutcome batch = answer(Shipment.batchOf(entries(2)), UpstreamAnswer.failed(unbuilt));
        assertTrue(batch.givenBack().stream().allMatch(back -> back.sendAtMost() == 1), "each gets its own verdict");
        assertTrue(view().waiting().isEmpty(), "no upstream waits for an entry's fault");
        assertEquals(0, view().answers().failedAttempts());
    }

    @Test
    void aBrokersRefusalSendsTheEntryToDeadInTheBrokersWords() {
        ShipmentOutcome outcome = answer(Shipment.single(entry(1)),
                UpstreamAnswer.failed(new KafkaFailures.Refused("topic t: RecordTooLargeException: too large")));
        PermanentRefusal why = outcome.deadLettered().get(0).why();
        assertEquals("refused by the broker: topic t: RecordTooLargeException: too large", why.reason());
        assertEquals(0, why.status());
        assertEquals(1, view().answers().failedAttempts());
    }
}
