package dev.mcpd.delivery;

import dev.mcpd.upstream.Upstream;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The spans, data points and log records upstreams took requests for but rejected, as their OTLP partial success
 * said: by upstream and signal, a fixed set. They are delivered — OTLP forbids sending them again — and counted here.
 */
public final class RejectedItems {

    private final LongAdder[][] counts;

    public RejectedItems(int upstreams) {
        counts = new LongAdder[upstreams][OtlpMerge.Signal.values().length];
        for (LongAdder[] row : counts) {
            Arrays.setAll(row, unused -> new LongAdder());
        }
    }

    /** The signals counted, as their labels: {@code traces}, {@code metrics}, {@code logs}. */
    public static List<String> signals() {
        return Arrays.stream(OtlpMerge.Signal.values()).map(OtlpMerge.Signal::label).toList();
    }

    void add(Upstream upstream, OtlpMerge.Signal signal, long items) {
        counts[upstream.order() - 1][signal.ordinal()].add(items);
    }

    /** Items the upstream of {@code order} rejected for the signal labelled {@code signal}. */
    public long count(int order, String signal) {
        return counts[order - 1][signals().indexOf(signal)].sum();
    }
}
