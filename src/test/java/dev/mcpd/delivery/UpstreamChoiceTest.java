package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first step of a delivery: the upstream and a place in its window, chosen before anything is packed — ordered
 * failover, an entry moving on from an upstream it failed on, oldest first, expiry and stop decided without a request.
 */
@Timeout(30) // a choice that ignored a stop or an expiry would wait for ever: that fails here
class UpstreamChoiceTest {

    private static final Instant NOW = Instant.parse("2026-12-07T12:00:00Z");

    @TempDir
    Path dir;

    private final UpstreamBoard board = new UpstreamBoard(List.of(URI.create("http://eu:4318"),
            URI.create("http://us:4318")), UpstreamBoard.Settings.defaults(new Backoff(Duration.ofSeconds(1),
            Duration.ofSeconds(60), () -> 0.5)), InstantSource.fixed(NOW));
    private final Upstream eu = board.upstreams().get(0);
    private final Upstream us = board.upstreams().get(1);
    private final EntryRecords records = new EntryRecords(seq -> true, InstantSource.fixed(NOW));
    private Spool spool;
    private UpstreamChoice choice;

    @BeforeEach
    void open() throws Exception {
        spool = Spool.open(dir);
        SpoolExpiry expiry = new SpoolExpiry(Optional.of(Duration.ofMinutes(1)), spool, new DeadLetters(dir),
                new EntryFates(), records, InstantSource.fixed(NOW));
        choice = new UpstreamChoice(board, expiry, records);
    }

    @AfterEach
    void close() throws Exception {
        spool.close();
    }

    private static SpoolEntry entry(long seq, long secondsAgo) {
        return new SpoolEntry(seq, new SpoolRequest("POST", "/v1/metrics", "application/x-protobuf", "", "k" + seq,
                Optional.empty(), NOW.minusSeconds(secondsAgo).toEpochMilli(), "x".getBytes(StandardCharsets.UTF_8)));
    }

    private void waits(Upstream upstream) {
        board.failed(upstream, "connection refused", OptionalInt.empty(), Optional.empty(), Duration.ofMillis(1), 1);
    }

    @Test
    void theFirstUpstreamNotWaitingIsChosenWithAPlaceInItsWindow() throws Exception {
        UpstreamChoice.Chosen first = assertInstanceOf(UpstreamChoice.Chosen.class,
                choice.choose(List.of(entry(1, 0)), false, () -> false));
        assertEquals(eu, first.upstream());
        assertEquals(1, board.window(eu).inFlight(), "the place is held until the answer is judged");
        first.slot().unused();

        waits(eu);
        UpstreamChoice.Chosen next = assertInstanceOf(UpstreamChoice.Chosen.class,
                choice.choose(List.of(entry(2, 0)), false, () -> false));
        assertEquals(us, next.upstream());
    }

    @Test
    void anEntryThatFailedOnAnUpstreamMovesOnAndWhatIsPackedForThereGoesBackOnceTheFirstIsReady() throws Exception {
        records.failedOn(List.of(entry(1, 0)), eu.order());
        UpstreamChoice.Chosen chosen = assertInstanceOf(UpstreamChoice.Chosen.class,
                choice.choose(List.of(entry(1, 0)), false, () -> false));
        assertEquals(us, chosen.upstream(), "eu is not waiting, but this entry just failed there");
        records.sending(Shipment.single(entry(1, 0)));
        assertTrue(choice.anotherPlace(us, Shipment.single(entry(2, 0)), () -> false).isEmpty(),
                "a newer shipment packed for us goes back: eu is the one to send to");
        assertEquals(1, board.window(us).inFlight(), "and holds no place there");
    }

    @Test
    void aNewerEntryGivesItsPlaceUpToAnOlderOneWaitingToBeTriedAgain() throws Exception {
        records.failedOn(List.of(entry(3, 0)), us.order());
        UpstreamChoice.Decided decided = assertInstanceOf(UpstreamChoice.Decided.class,
                choice.choose(List.of(entry(5, 0)), false, () -> false));
        assertEquals(1, decided.outcome().givenBack().size());
        assertEquals(ShipmentOutcome.AS_PACKED, decided.outcome().givenBack().get(0).sendAtMost());
        assertEquals(0, board.window(eu).inFlight(), "the place it found is given up");
    }

    @Test
    void whileEveryUpstreamWaitsAnExpiredEntryGoesToDeadAndAnExpiredTurnGoesBackToGoAlone() throws Exception {
        waits(eu);
        waits(us);
        UpstreamChoice.Decided lone = assertInstanceOf(UpstreamChoice.Decided.class,
                choice.choose(List.of(entry(1, 120)), false, () -> false));
        assertEquals(1, lone.outcome().deadLettered().size());
        assertTrue(lone.outcome().deadLettered().get(0).why().reason().equals("expired: waited 2m in the spool, longer than --spool-max-age 1m"),
                lone.outcome().deadLettered().get(0).why().reason());

        UpstreamChoice.Decided turn = assertInstanceOf(UpstreamChoice.Decided.class,
                choice.choose(List.of(entry(2, 120), entry(3, 1)), true, () -> false));
        assertEquals(List.of(1, 1), turn.outcome().givenBack().stream().map(ShipmentOutcome.GivenBack::sendAtMost)
                .toList());
    }

    @Test
    void aStopWhileEveryUpstreamWaitsGivesTheEntriesBackAsTheyWere() throws Exception {
        waits(eu);
        waits(us);
        UpstreamChoice.Decided decided = assertInstanceOf(UpstreamChoice.Decided.class,
                choice.choose(List.of(entry(1, 0), entry(2, 0)), true, () -> true));
        assertEquals(2, decided.outcome().givenBack().size());
        assertTrue(decided.outcome().deadLettered().isEmpty());
    }
}
