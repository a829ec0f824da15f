package dev.mcpd.observability;

import dev.mcpd.delivery.RejectedCounts;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamView;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.InstantSource;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;

/**
 * The relay's meters, read at scrape time from where the facts live — the spool, the upstream board, the
 * dead letters — so there is no second count to drift: every meter is a function of them. Names are Micrometer's
 * dotted form of the metric names ({@code mcpd.relay.accepted} is exported as {@code mcpd_relay_accepted_total}).
 * Upstreams are labelled by URL without userinfo, so no secret reaches a label.
 */
public final class RelayMetrics {

    private RelayMetrics() {
    }

    public static void bind(MeterRegistry registry, Spool spool, UpstreamBoard board, DeadLetters deadLetters,
                            LongSupplier expired, RejectedCounts rejectedItems, InstantSource clock) {
        FunctionCounter.builder("mcpd.relay.accepted", spool, Spool::accepted)
                .description("Requests written to the spool").register(registry);
        FunctionCounter.builder("mcpd.relay.refused.full", spool, Spool::refusedFull)
                .description("Requests refused with 503 because the spool was full").register(registry);
        FunctionCounter.builder("mcpd.relay.failovers", board, UpstreamBoard::failovers)
                .description("Requests delivered to an upstream other than the first").register(registry);
        FunctionCounter.builder("mcpd.relay.corrupt", spool, Spool::corrupted)
                .description("Damaged spool entries or regions found since start, copied to corrupt/").register(registry);
        FunctionCounter.builder("mcpd.relay.dead.letter", deadLetters, DeadLetters::keptSinceStart)
                .description("Requests moved to dead/ (refused for good, or expired)").register(registry);
        // Micrometer keeps the object it reads only weakly: it must be one that lives as long as the relay, as the
        // dead letters do (a method reference made here would not).
        FunctionCounter.builder("mcpd.relay.expired", deadLetters, unused -> expired.getAsLong())
                .description("Requests that waited longer than --spool-max-age, moved to dead/").register(registry);
        Gauge.builder("mcpd.relay.dead.letters", deadLetters, d -> d.recentCensus().count())
                .description("Requests held in dead/ now (replay or purge them: mcpd relay dead)").register(registry);
        Gauge.builder("mcpd.relay.dead.letter.bytes", deadLetters, d -> d.recentCensus().bytes())
                .description("Bytes of the files in dead/").register(registry);
        Gauge.builder("mcpd.relay.spool.entries", spool, Spool::entries)
                .description("Requests waiting in the spool (not yet delivered, including those being sent)")
                .register(registry);
        Gauge.builder("mcpd.relay.spool.bytes", spool, Spool::bytes)
                .description("Bytes held in the spool").register(registry);
        Gauge.builder("mcpd.relay.spool.max.bytes", spool, Spool::maxBytes)
                .description("The spool's bound (--spool-max-bytes): the spool's bytes and its dead letters' together"
                        + " never pass it").register(registry);
        Gauge.builder("mcpd.relay.spool.oldest.seconds", spool, s -> oldestAgeSeconds(s, clock))
                .description("Age of the oldest waiting request, or 0").register(registry);
        Gauge.builder("mcpd.relay.spool.out.for.delivery", spool, Spool::outForDelivery)
                .description("Requests taken from the spool and not answered yet (in flight, alone or in batches)")
                .register(registry);
        for (var upstream : board.upstreams()) {
            Tags tags = Tags.of("upstream", upstream.label(), "order", Integer.toString(upstream.order()));
            int index = upstream.order() - 1;
            for (String signal : RejectedCounts.signals()) {
                FunctionCounter.builder("mcpd.relay.upstream.rejected.items", rejectedItems,
                                r -> r.count(upstream.order(), signal))
                        .description("Spans, data points or log records an upstream took the request for but rejected"
                                + " (OTLP partial success): delivered, never sent again")
                        .tags(tags.and("signal", signal)).register(registry);
            }
            FunctionCounter.builder("mcpd.relay.delivered", board, viewOf(index, v -> v.answers().delivered()))
                    .description("Requests an upstream accepted").tags(tags).register(registry);
            FunctionCounter.builder("mcpd.relay.upstream.requests", board, viewOf(index, v -> v.traffic().requests()))
                    .description("HTTP requests sent to an upstream (a relay batch is one; delivered counts entries)")
                    .tags(tags).register(registry);
            FunctionCounter.builder("mcpd.relay.failed.attempts", board,
                    viewOf(index, v -> v.answers().failedAttempts()))
                    .description("Attempts an upstream did not accept").tags(tags).register(registry);
            Gauge.builder("mcpd.relay.upstream.up", board, viewOf(index, v -> v.answers().up() ? 1 : 0))
                    .description("1 when the upstream answered in the last " + board.upWindow().toSeconds()
                            + " seconds, else 0").tags(tags)
                    .register(registry);
            Gauge.builder("mcpd.relay.upstream.window", board, viewOf(index, v -> v.traffic().window()))
                    .description("Requests the upstream may have in flight now (its adaptive window)").tags(tags)
                    .register(registry);
            Gauge.builder("mcpd.relay.upstream.in.flight", board, viewOf(index, v -> v.traffic().inFlight()))
                    .description("Requests in flight to the upstream").tags(tags).register(registry);
            Gauge.builder("mcpd.relay.upstream.in.service", board, viewOf(index, v -> v.checks().inService() ? 1 : 0))
                    .description("1 while the upstream is in service (its checks in a row), else 0").tags(tags)
                    .register(registry);
            FunctionCounter.builder("mcpd.relay.health.checks", board, viewOf(index, v -> v.checks().succeeded()))
                    .description("Health checks of the upstream (probes and deliveries), by result")
                    .tags(tags.and("result", "success")).register(registry);
            FunctionCounter.builder("mcpd.relay.health.checks", board, viewOf(index, v -> v.checks().failed()))
                    .description("Health checks of the upstream (probes and deliveries), by result")
                    .tags(tags.and("result", "failure")).register(registry);
        }
        ProcessMetrics.bind(registry);
    }

    private static ToDoubleFunction<UpstreamBoard> viewOf(int index,
                                                          ToDoubleFunction<UpstreamView> value) {
        return board -> value.applyAsDouble(board.views().get(index));
    }

    private static double oldestAgeSeconds(Spool spool, InstantSource clock) {
        return spool.oldestReceivedAtMillis()
                .map(received -> Math.max(0, clock.millis() - received) / 1000.0).orElse(0.0);
    }
}
