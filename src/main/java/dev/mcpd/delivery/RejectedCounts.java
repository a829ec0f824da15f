package dev.mcpd.delivery;

import java.util.Arrays;
import java.util.List;

/**
 * The spans, data points and log records each upstream took a request for but rejected (OTLP partial success), by
 * signal: what the relay's metrics export.
 */
public interface RejectedCounts {

    /** The signals counted, as their labels: {@code traces}, {@code metrics}, {@code logs}. */
    static List<String> signals() {
        return Arrays.stream(OtlpMerge.Signal.values()).map(OtlpMerge.Signal::label).toList();
    }

    /** Items the upstream of {@code order} rejected for the signal labelled {@code signal}. */
    long count(int order, String signal);
}
