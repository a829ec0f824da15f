package dev.mcpd.source;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.Map;

/**
 * The Kafka source's meters: {@code mcpd_collector_source_records_total{outcome}} (records archived, duplicate,
 * refused) and {@code mcpd_collector_source_lag_records{partition}} (records behind the end of each partition this
 * replica reads).
 */
final class SourceMetrics {

    private static final String RECORDS = "mcpd.collector.source.records";

    private final MeterRegistry registry;
    private final MultiGauge lagGauge;
    private final Map<Integer, Long> lag;

    /** @param lag partition to records behind, as the source keeps it */
    SourceMetrics(MeterRegistry registry, Map<Integer, Long> lag) {
        this.registry = registry;
        this.lag = lag;
        for (String outcome : new String[] {"archived", "duplicate", "refused"}) {
            registry.counter(RECORDS, "outcome", outcome);
        }
        this.lagGauge = MultiGauge.builder("mcpd.collector.source.lag.records")
                .description("Records of the Kafka source not yet read, per partition this replica reads")
                .register(registry);
    }

    void record(String outcome) {
        registry.counter(RECORDS, "outcome", outcome).increment();
    }

    /** Brings the lag gauges up to date with the partitions read now. */
    void lagChanged() {
        lagGauge.register(lag.entrySet().stream()
                .map(e -> MultiGauge.Row.of(Tags.of("partition", e.getKey().toString()), e.getValue())).toList(), true);
    }
}
