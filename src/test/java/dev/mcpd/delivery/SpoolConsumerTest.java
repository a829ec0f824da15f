package dev.mcpd.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.Streams;
import dev.mcpd.endpoint.SpoolComponent;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamOffer;
import dev.mcpd.upstream.UpstreamWindow;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delivery lanes of {@code from: spool:relay}, with the route's steps after them replaced by a judge that decides
 * each shipment's outcome at once: every committed entry goes through the route and leaves the spool once delivered,
 * never twice; what is given back goes again before newer entries; an exchange that ends without an outcome gives its
 * entries back after a pause; and scarce memory (the delivery budget) slows delivery without reordering it.
 */
@Timeout(60)
class SpoolConsumerTest {

    private static final int BODY_BYTES = 1_000;
    private static final String ORDERED = "/api/v1/push";

    @TempDir
    Path dir;

    private Spool spool;
    private CamelContext camel;
    private DeliveryBudget budget;
    private final UpstreamBoard board = new UpstreamBoard(List.of(URI.create("http://eu:4318")),
            UpstreamBoard.Settings.defaults(new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), () -> 0.5)),
            InstantSource.system());
    /** The seqs of each shipment the judge saw, in the order it saw them. */
    private final List<List<Long>> shipped = Collections.synchronizedList(new ArrayList<>());
    private final Map<Long, Integer> deliveries = new ConcurrentHashMap<>();
    private final AtomicInteger judging = new AtomicInteger();
    private final AtomicInteger mostJudgedAtOnce = new AtomicInteger();
    /** What the judge decides for a shipment; null: the exchange ends without an outcome. */
    private volatile Function<Shipment, ShipmentOutcome> verdict = SpoolConsumerTest::delivered;

    @BeforeEach
    void open() throws Exception {
        spool = Spool.open(dir);
    }

    @AfterEach
    void close() throws Exception {
        if (camel != null) {
            camel.close();
        }
        spool.close();
    }

    private static ShipmentOutcome delivered(Shipment shipment) {
        return new ShipmentOutcome(Optional.empty(), shipment.entries().stream()
                .<ShipmentOutcome.Fate>map(e -> new ShipmentOutcome.Delivered(e, 200, new byte[0])).toList(), false);
    }

    /** Delivery from the spool with {@code workers} lanes and a budget of {@code budgetBytes}. */
    private void deliver(int workers, long budgetBytes, int batchMaxEntries) throws Exception {
        deliver("spool:relay", new DeliveryWorkers(workers), budgetBytes, batchMaxEntries);
    }

    private void deliver(String from, DeliveryWorkers workers, long budgetBytes, int batchMaxEntries)
            throws Exception {
        budget = new DeliveryBudget(budgetBytes);
        EntryRecords records = new EntryRecords(spool::holds, InstantSource.system());
        SpoolExpiry expiry = new SpoolExpiry(Optional.empty(), spool, new DeadLetters(dir), new EntryFates(), records,
                InstantSource.system());
        SpoolLanes lanes = new SpoolLanes(workers, budget, board,
                new ShipmentPacker(batchMaxEntries, 1 << 20, false), records,
                new OrderedStreams(new Streams(List.of(ORDERED), List.of()), batchMaxEntries, 1 << 20), expiry);
        camel = new DefaultCamelContext();
        camel.addComponent("spool", new SpoolComponent(spool, new EntryFates(), 1 << 20, lanes));
        camel.addRoutes(new RouteBuilder() {
            @Override
            public void configure() {
                from(from).process(SpoolConsumerTest.this::judge);
            }
        });
        camel.start();
    }

    private void judge(Exchange exchange) {
        if (DeliveryExchange.outcome(exchange).isPresent()) {
            return; // decided by the lane without a request
        }
        mostJudgedAtOnce.accumulateAndGet(judging.incrementAndGet(), Math::max);
        try {
            Shipment shipment = DeliveryExchange.shipment(exchange);
            assertTrue(budget.held() <= budget.capacity(), "the budget holds " + budget.held());
            shipped.add(shipment.entries().stream().map(SpoolEntry::seq).toList());
            DeliveryExchange.slot(exchange).ifPresent(UpstreamWindow.Slot::answered);
            ShipmentOutcome outcome = verdict.apply(shipment);
            if (outcome != null) {
                outcome.delivered().forEach(d -> deliveries.merge(d.entry().seq(), 1, Integer::sum));
                DeliveryExchange.setOutcome(exchange, outcome);
            }
        } finally {
            judging.decrementAndGet();
        }
    }

    private List<Long> append(String target, int count) throws Exception {
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            seqs.add(spool.append(new SpoolRequest("POST", target, "application/x-protobuf", "", target + i,
                    Optional.empty(), System.currentTimeMillis(), new byte[BODY_BYTES])).get(10, TimeUnit.SECONDS)
                    .seq());
        }
        return seqs;
    }

    private void awaitEmpty() {
        await().atMost(30, TimeUnit.SECONDS).until(() -> spool.entries() == 0 && spool.outForDelivery() == 0);
        await().atMost(5, TimeUnit.SECONDS).until(() -> budget.held() == 0);
    }

    /** Each delivery's seqs, in the order the judge saw them, counting only those it delivered. */
    private List<Long> deliveredInOrder(List<Long> givenBackOnce) {
        List<Long> order = new ArrayList<>();
        List<Long> skipped = new ArrayList<>(givenBackOnce);
        synchronized (shipped) {
            for (List<Long> shipment : shipped) {
                for (Long seq : shipment) {
                    if (!skipped.remove(seq)) {
                        order.add(seq);
                    }
                }
            }
        }
        return order;
    }

    @Test
    void everyCommittedEntryGoesThroughTheRouteAndLeavesTheSpoolOnceDelivered() throws Exception {
        deliver(3, 1 << 20, 1);
        List<Long> seqs = append("/v1/logs", 200);
        awaitEmpty();
        assertEquals(seqs.size(), deliveries.size());
        assertTrue(deliveries.values().stream().allMatch(n -> n == 1), "none twice: " + deliveries);
        assertTrue(deliveries.keySet().containsAll(seqs));
    }

    @Test
    void theLanesAreTheEndpointsWorkersByDefaultTheConfiguredNumber() throws Exception {
        DeliveryWorkers configured = new DeliveryWorkers(3);
        deliver("spool:relay?workers=2", configured, 1 << 20, 1);
        assertEquals(2, configured.total(), "the route's own number, counted where the status page reads it");
        camel.close();
        camel = null;
        DeliveryWorkers byDefault = new DeliveryWorkers(3);
        deliver("spool:relay", byDefault, 1 << 20, 1);
        assertEquals(3, byDefault.total());
        List<Long> seqs = append("/v1/logs", 20);
        awaitEmpty();
        assertEquals(seqs.size(), deliveries.size());
    }

    @Test
    void entriesWaitingBehindTheFirstTravelWithItInOneShipment() throws Exception {
        Upstream eu = board.upstreams().get(0);
        board.offers(eu, new UpstreamOffer(UpstreamOffer.Http2.NONE, true)); // an mcpd collector: relay batches
        board.probed(eu, OptionalInt.of(200), Duration.ZERO);
        List<Long> seqs = append("/v1/logs", 30);
        deliver(1, 1 << 20, 50);
        awaitEmpty();
        assertEquals(seqs.size(), deliveries.size());
        assertTrue(shipped.stream().anyMatch(shipment -> shipment.size() > 1),
                "what waited went together, not one by one: " + shipped);
        assertEquals(seqs, deliveredInOrder(List.of()), "in the order they were received");
    }

    @Test
    void anEntryGivenBackGoesAgainBeforeNewerOnes() throws Exception {
        AtomicInteger refusals = new AtomicInteger();
        verdict = shipment -> shipment.first().seq() == 1 && refusals.getAndIncrement() == 0
                ? ShipmentOutcome.givenBack(shipment) : delivered(shipment);
        List<Long> seqs = append("/v1/logs", 5);
        deliver(1, 1 << 20, 1);
        awaitEmpty();
        assertEquals(List.of(1L, 1L, 2L, 3L, 4L, 5L), shipped.stream().map(s -> s.get(0)).toList());
        assertEquals(seqs, deliveredInOrder(List.of(1L)));
    }

    @Test
    void anExchangeThatEndsWithoutAnOutcomeGivesItsEntriesBackAfterAPause() throws Exception {
        AtomicInteger faults = new AtomicInteger();
        verdict = shipment -> shipment.first().seq() == 2 && faults.getAndIncrement() == 0 ? null
                : delivered(shipment);
        List<Long> seqs = append("/v1/logs", 3);
        deliver(1, 1 << 20, 1);
        awaitEmpty();
        assertEquals(2, shipped.stream().filter(s -> s.contains(2L)).count(), "once faulted, once delivered");
        assertEquals(seqs.size(), deliveries.size());
        assertTrue(deliveries.values().stream().allMatch(n -> n == 1), deliveries.toString());
    }

    @Test
    void withRoomForOneEntryAtATimeTheLanesDeliverOneAtATimeOldestFirst() throws Exception {
        List<Long> seqs = append("/v1/logs", 40);
        deliver(4, BODY_BYTES + BODY_BYTES / 2, 1); // an entry's stored size fits; two do not
        awaitEmpty();
        assertEquals(1, mostJudgedAtOnce.get(), "one entry held at a time");
        assertEquals(seqs, deliveredInOrder(List.of()), "no lane took a newer entry while another waited for room");
    }

    @Test
    void anOrderedStreamGoesInOrderWhenRoomIsScarce() throws Exception {
        List<Long> seqs = append(ORDERED, 60);
        deliver(4, 3L * BODY_BYTES, 1);
        awaitEmpty();
        assertEquals(seqs, deliveredInOrder(List.of()));
    }
}
