package dev.mcpd.collector;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.http.ProbeAnswer;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code /readyz} of a collector: 200 {@code ok} while the store answers a trivial query in time (and its Kafka source,
 * if any, can be reached: else 200 {@code degraded}).
 */
public final class CollectorReadiness implements Supplier<ProbeAnswer.Verdict> {

    static final Duration STORE_TIMEOUT = InternalTuning.DEFAULT.storeCheckTimeout();

    private final JdbcStore store;
    private final Supplier<Optional<String>> sourceUnreachable;

    public CollectorReadiness(JdbcStore store) {
        this(store, Optional::empty);
    }

    /** @param sourceUnreachable what keeps the Kafka source from its records, said of it, while something does */
    CollectorReadiness(JdbcStore store, Supplier<Optional<String>> sourceUnreachable) {
        this.store = store;
        this.sourceUnreachable = sourceUnreachable;
    }

    @Override
    public ProbeAnswer.Verdict get() {
        Optional<String> problem = store.problem(STORE_TIMEOUT);
        if (problem.isPresent()) {
            return new ProbeAnswer.Verdict(503, "unavailable: the store does not answer: " + problem.get());
        }
        // HTTP ingest still works: the collector stays in the load balancer's pool, and says what is wrong.
        return sourceUnreachable.get().map(what -> new ProbeAnswer.Verdict(200, "degraded: the Kafka source " + what))
                .orElseGet(() -> new ProbeAnswer.Verdict(200, "ok"));
    }
}
