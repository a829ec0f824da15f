package dev.mcpd.collector;

import dev.mcpd.observability.ProcessMetrics;
import dev.mcpd.store.Archived;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The collector's meters: {@code mcpd_ingest_accepted_total}, {@code mcpd_ingest_duplicate_total} and
 * {@code mcpd_ingest_rejected_total} (events, by ingest path — four paths at most, so the label stays small),
 * {@code mcpd_store_latency_seconds} (one archive transaction), {@code mcpd_collector_key_conflicts_total}
 * (copies under a key their sender had used for another body) and {@code mcpd_collector_lease_held}, plus the process
 * metrics (the Kafka source adds its own).
 */
public final class CollectorMetrics {

    private final MeterRegistry registry;
    private final Timer storeLatency;
    private final Counter keyConflicts;
    /** The ingest paths' counters, by path. */
    private final Map<String, PathCounters> byPath = new HashMap<>();
    private final AtomicInteger leaseHeld = new AtomicInteger();

    public CollectorMetrics(MeterRegistry registry) {
        this.registry = registry;
        ProcessMetrics.bind(registry);
        this.storeLatency = Timer.builder("mcpd.store.latency")
                .description("Time to archive one batch in the store (one transaction)")
                .publishPercentiles(0.5, 0.99).register(registry);
        this.keyConflicts = Counter.builder("mcpd.collector.key.conflicts")
                .description("Copies that came again under an idempotency key their sender had used for another body")
                .register(registry);
        Gauge.builder("mcpd.collector.lease.held", leaseHeld, Number::doubleValue)
                .description("1 while this replica holds the store's lease (and does the upkeep), else 0")
                .register(registry);
        for (String path : new String[] {"/v1/ingest", "/v1/traces", "/v1/logs", "/v1/metrics"}) {
            byPath.put(path, new PathCounters(registry, path));
        }
    }

    /**
     * One path's counters, looked up once: the registry's lookup (an id built and hashed from name and tags) three
     * times per entry was a measurable share of a relay batch's CPU.
     */
    private record PathCounters(Counter accepted, Counter duplicate, Counter rejected) {
        PathCounters(MeterRegistry registry, String path) {
            this(registry.counter("mcpd.ingest.accepted", "path", path),
                    registry.counter("mcpd.ingest.duplicate", "path", path),
                    registry.counter("mcpd.ingest.rejected", "path", path));
        }
    }

    void archived(String path, Archived archived) {
        PathCounters counters = byPath.get(path);
        if (counters == null) { // only the four ingest paths are archived; any other is counted all the same
            counters = new PathCounters(registry, path);
        }
        counters.accepted().increment(archived.accepted());
        counters.duplicate().increment(archived.duplicate());
        counters.rejected().increment(archived.rejected());
        if (archived.conflict()) {
            keyConflicts.increment();
        }
    }

    /** {@code mcpd_collector_lease_held}: 1 while this replica holds the store's lease. */
    void leaseHeld(boolean held) {
        leaseHeld.set(held ? 1 : 0);
    }

    void storeLatency(Duration latency) {
        storeLatency.record(latency);
    }
}
