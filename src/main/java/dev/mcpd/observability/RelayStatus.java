package dev.mcpd.observability;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.delivery.WorkerLoad;
import dev.mcpd.http.Answers;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.Spool;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamView;
import java.io.IOException;
import java.time.InstantSource;
import java.util.function.LongSupplier;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * {@code GET /relay/status} (first bullet): what the relay is doing, as JSON — every upstream's state
 * ({@code up}, {@code waiting} until when and why, {@code down}), its last status and latency, consecutive failures
 * and counts; the spool (entries, bytes, bound, oldest age, dead letters); the delivery barrier (the relay's id, the
 * newest sequence number handed out, the oldest still waiting, callers waiting); the delivery workers. No key appears.
 */
public final class RelayStatus implements Processor {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Spool spool;
    private final UpstreamBoard board;
    private final DeadLetters deadLetters;
    private final ReplayInbox replayInbox;
    private final LongSupplier expired;
    private final WorkerLoad workers;
    private final InstantSource clock;

    public RelayStatus(Spool spool, UpstreamBoard board, DeadLetters deadLetters, ReplayInbox replayInbox,
                       LongSupplier expired, WorkerLoad workers, InstantSource clock) {
        this.replayInbox = replayInbox;
        this.expired = expired;
        this.spool = spool;
        this.board = board;
        this.deadLetters = deadLetters;
        this.workers = workers;
        this.clock = clock;
    }

    private int waitingForReplay() {
        try {
            return replayInbox.waiting().entries();
        } catch (IOException e) {
            return 0; // replay/ could not be read just now; the intake logs what goes wrong with it
        }
    }

    @Override
    public void process(Exchange exchange) throws JsonProcessingException {
        Message answer = exchange.getMessage();
        Answers.write(answer, 200, Answers.JSON,
                Answers.of(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(snapshot())));
    }

    ObjectNode snapshot() {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode upstreams = root.putArray("upstreams");
        for (UpstreamView view : board.views()) {
            ObjectNode upstream = upstreams.addObject();
            upstream.put("url", view.upstream().label());
            upstream.put("order", view.upstream().order());
            upstream.put("state", view.state());
            view.waiting().map(w -> w.until()).ifPresent(until -> upstream.put("waitingUntil", until.toString()));
            view.waiting().map(w -> w.cause()).ifPresent(cause -> upstream.put("waitingBecause", cause));
            view.answers().lastStatus().ifPresent(status -> upstream.put("lastStatus", status));
            view.answers().lastLatency().ifPresent(latency -> upstream.put("lastLatencyMs", latency.toMillis()));
            view.answers().lastUp().ifPresent(up -> upstream.put("lastUp", up.toString()));
            upstream.put("consecutiveFailures", view.answers().consecutiveFailures());
            upstream.put("delivered", view.answers().delivered());
            upstream.put("failedAttempts", view.answers().failedAttempts());
            upstream.put("window", view.traffic().window());
            upstream.put("inFlight", view.traffic().inFlight());
            upstream.put("protocol", view.traffic().protocol());
            upstream.put("batches", view.traffic().batches());
            upstream.put("requests", view.traffic().requests());
            upstream.put("inService", view.checks().inService());
            ObjectNode checks = upstream.putObject("checks");
            checks.put("mode", view.checks().passiveBecause().isPresent() ? "passive" : "active");
            view.checks().passiveBecause().ifPresent(why -> checks.put("passiveBecause", why));
            checks.put("successesInARow", view.checks().successesInARow());
            checks.put("failuresInARow", view.checks().failuresInARow());
            checks.put("succeeded", view.checks().succeeded());
            checks.put("failed", view.checks().failed());
            view.checks().last().ifPresent(check -> {
                ObjectNode last = upstream.putObject("lastCheck");
                last.put("at", check.at().toString());
                check.status().ifPresent(status -> last.put("status", status));
                last.put("latencyMs", check.latency().toMillis());
                last.put("result", check.success() ? "success" : "failure");
                if (!check.success()) {
                    last.put("reason", check.reason());
                }
            });
        }
        ObjectNode spoolNode = root.putObject("spool");
        spoolNode.put("directory", spool.directory().toString());
        spoolNode.put("entries", spool.entries());
        spoolNode.put("bytes", spool.bytes());
        spoolNode.put("maxBytes", spool.maxBytes());
        spoolNode.put("oldestSeconds", spool.oldestReceivedAtMillis()
                .map(received -> Math.max(0, clock.millis() - received) / 1000).orElse(0L));
        spoolNode.put("outForDelivery", spool.outForDelivery());
        spoolNode.put("deadLetters", deadLetters.recentCensus().count());
        spoolNode.put("accepted", spool.accepted());
        spoolNode.put("refusedFull", spool.refusedFull());
        DeadLetters.Census census = deadLetters.recentCensus();
        ObjectNode deadNode = root.putObject("deadLetters");
        deadNode.put("directory", deadLetters.directory().toString());
        deadNode.put("count", census.count());
        deadNode.put("bytes", census.bytes());
        if (census.oldest().isPresent()) {
            deadNode.put("oldestKeptAt", census.oldest().get().toString());
        } else {
            deadNode.putNull("oldestKeptAt");
        }
        deadNode.put("expiredSinceStart", expired.getAsLong());
        deadNode.put("waitingForReplay", waitingForReplay());
        ObjectNode syncNode = root.putObject("sync");
        syncNode.put("relay", spool.id());
        syncNode.put("newestSeq", spool.newestSeq());
        long oldest = spool.oldestWaitingSeq();
        if (oldest >= 0) {
            syncNode.put("oldestWaitingSeq", oldest);
        } else {
            syncNode.putNull("oldestWaitingSeq");
        }
        syncNode.put("waiters", spool.awaiting());
        ObjectNode workersNode = root.putObject("workers");
        workersNode.put("total", workers.total());
        workersNode.put("busy", workers.busy());
        workersNode.put("idle", workers.total() - workers.busy());
        return root;
    }
}
