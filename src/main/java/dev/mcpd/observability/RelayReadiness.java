package dev.mcpd.observability;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.http.ProbeAnswer;
import dev.mcpd.spool.Spool;
import dev.mcpd.upstream.UpstreamBoard;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * {@code /readyz} of the relay, one short line:
 * <ul>
 *   <li>{@code 503 unavailable: spool not writable: …} while writes to the spool fail (a full disk, a directory that
 *       was removed or made read-only) until one succeeds again;</li>
 *   <li>{@code 503 unavailable: spool full …} while the spool turns requests away (one was refused for space within
 *       the last {@link #FULL_MEMORY}, or it holds its bound);</li>
 *   <li>{@code 503 unavailable: no upstream reachable and the spool is N% full} at 80% or more with no upstream up;</li>
 *   <li>{@code 200 degraded: …} while no upstream in service answered its probe or took a delivery within the up
 *       window — the relay still buffers, so a load balancer keeps sending to it;</li>
 *   <li>{@code 200 ok} otherwise.</li>
 * </ul>
 */
public final class RelayReadiness implements Supplier<ProbeAnswer.Verdict> {

    /** A refusal for space keeps the relay unready this long: the Retry-After the senders were given. */
    static final Duration FULL_MEMORY = InternalTuning.DEFAULT.retryAfter();
    static final double UNREADY_FILL = InternalTuning.DEFAULT.unreadyFill();

    private final Spool spool;
    private final UpstreamBoard board;

    public RelayReadiness(Spool spool, UpstreamBoard board) {
        this.spool = spool;
        this.board = board;
    }

    @Override
    public ProbeAnswer.Verdict get() {
        var writeProblem = spool.writeProblem();
        if (writeProblem.isPresent()) {
            return new ProbeAnswer.Verdict(503, "unavailable: spool not writable: " + writeProblem.get()
                    + "; requests are refused with 503 until a write succeeds");
        }
        long bytes = spool.boundedBytes();
        long max = spool.maxBytes();
        if (bytes >= max || spool.refusedFullWithin(FULL_MEMORY)) {
            return new ProbeAnswer.Verdict(503, "unavailable: spool full (" + bytes + " of " + max
                    + " bytes, dead letters included); requests are refused with 503 until delivery, or a replay or purge of"
                    + " dead letters, frees space");
        }
        if (board.anyUp()) {
            return new ProbeAnswer.Verdict(200, "ok");
        }
        long percent = Math.round(100.0 * bytes / max);
        if (bytes >= UNREADY_FILL * max) {
            return new ProbeAnswer.Verdict(503, "unavailable: no upstream reachable and the spool is " + percent
                    + "% full");
        }
        return new ProbeAnswer.Verdict(200, "degraded: no upstream in service answered its probe or took a delivery in"
                + " the last "
                + board.upWindow().toSeconds() + " s (" + upstreamStates() + "); buffering, spool " + percent
                + "% full");
    }

    private String upstreamStates() {
        return board.views().stream().map(v -> v.upstream().label() + " " + v.state()
                        + v.waiting().map(w -> w.until()).map(until -> " until " + until.truncatedTo(ChronoUnit.SECONDS)
                                + v.waiting().map(w -> w.cause()).map(c -> " after " + c).orElse("")).orElse("")
                        + v.answers().lastUp().map(t -> ", last up " + t.truncatedTo(ChronoUnit.SECONDS))
                                .orElse(", never up"))
                .collect(Collectors.joining("; "));
    }
}
