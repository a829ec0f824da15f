package dev.mcpd.collector;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.http.ProbeAnswer;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/** {@code /readyz} of a collector: 200 {@code ok} while the store answers a trivial query in time. */
public final class CollectorReadiness implements Supplier<ProbeAnswer.Verdict> {

    static final Duration STORE_TIMEOUT = InternalTuning.DEFAULT.storeCheckTimeout();

    private final JdbcStore store;

    public CollectorReadiness(JdbcStore store) {
        this.store = store;
    }

    @Override
    public ProbeAnswer.Verdict get() {
        Optional<String> problem = store.problem(STORE_TIMEOUT);
        return problem.map(why -> new ProbeAnswer.Verdict(503, "unavailable: the store does not answer: " + why))
                .orElseGet(() -> new ProbeAnswer.Verdict(200, "ok"));
    }
}
