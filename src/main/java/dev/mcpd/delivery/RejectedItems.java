package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * The spans, data points and log records upstreams took requests for but rejected, as their OTLP partial success
 * said: by upstream and signal, a fixed set. They are delivered — OTLP forbids sending them again — and counted here.
 */
public final class RejectedItems implements RejectedCounts {

    private final LongAdder[][] counts;

    public RejectedItems(int upstreams) {
        counts = new LongAdder[upstreams][OtlpMerge.Signal.values().length];
        for (LongAdder[] row : counts) {
            Arrays.setAll(row, unused -> new LongAdder());
        }
    }

    void add(Upstream upstream, OtlpMerge.Signal signal, long items) {
        counts[upstream.order() - 1][signal.ordinal()].add(items);
    }

    @Override
    public long count(int order, String signal) {
        return counts[order - 1][RejectedCounts.signals().indexOf(signal)].sum();
    }
}
