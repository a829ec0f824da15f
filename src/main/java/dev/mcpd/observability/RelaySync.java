package dev.mcpd.observability;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.http.Answers;
import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.SenderKeyCheck;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.routing.Resume;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import dev.mcpd.wire.WaitDuration;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.spi.ShutdownPrepared;
import org.apache.camel.support.AsyncProcessorSupport;

/**
 * {@code GET /relay/sync?seq=N[&from=M][&relay=ID][&timeout=DURATION]}: answers once no entry with a sequence number
 * up to N is left in the spool — each delivered or moved to dead/ — or when the timeout passes first (504). The
 * answer counts the dead letters from M (a job's first number; default 1, the spool's whole history) through N. Checked
 * at once, before any wait: the ingest key (401), the parameters (400), the relay's id (421), whether N was ever handed
 * out (409). It sends nothing to any upstream.
 *
 * <p>The step of the {@code relay-sync} route, which runs on the event loop that took the request: a waiter is a
 * callback on the spool's drain barrier and a timer — it holds no thread — and the route resumes when the oldest
 * waiting entry passes its N, the time is up, or the caller hangs up (then nothing waits for it any more).
 */
public final class RelaySync extends AsyncProcessorSupport implements ShutdownPrepared {

    public static final String PATH = "/relay/sync";
    private static final String ID_HEADER = "mcpd-relay-id";
    private static final Pattern SEQ = Pattern.compile("[0-9]{1,18}");
    private static final Pattern ID = Pattern.compile("[0-9a-f]{32}");
    private static final Set<String> PARAMETERS = Set.of("seq", "from", "relay", "timeout");

    private final Spool spool;
    private final DeadLetters deadLetters;
    private final SenderKeyCheck keyCheck;
    private final Timer waits;

    public RelaySync(Spool spool, DeadLetters deadLetters, SenderKeyCheck keyCheck, MeterRegistry registry) {
        this.spool = spool;
        this.deadLetters = deadLetters;
        this.keyCheck = keyCheck;
        Gauge.builder("mcpd.relay.sync.waiters", spool, Spool::awaiting)
                .description("Callers of /relay/sync waiting now").register(registry);
        // A dozen buckets over what a wait can be (Micrometer's percentile histogram exported 74 of them).
        this.waits = Timer.builder("mcpd.relay.sync.wait").description("How long /relay/sync callers waited")
                .serviceLevelObjectives(WAIT_BUCKETS.toArray(Duration[]::new)).register(registry);
    }

    public static final List<Duration> WAIT_BUCKETS = List.of(Duration.ofMillis(5), Duration.ofMillis(10),
            Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
            Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5),
            Duration.ofSeconds(10), Duration.ofSeconds(30), WaitDuration.MAX);

    /** What a caller asked for, once its parameters are read. */
    private record Wait(long seq, long from, Duration timeout) {
    }

    /** A refusal given before any wait: status and one line. */
    private static final class Refused extends RuntimeException {
        final int status;

        Refused(int status, String reason) {
            super(reason, null, false, false);
            this.status = status;
        }
    }

    /** Why a wait ended: drained, time up or the relay stopping (then judged again), or the caller hung up. */
    private enum Ended { DRAINED, TIME_UP, GONE }

    /** The waits under way: a stop ends them at once, each answered with what is still pending. */
    private final Set<CompletableFuture<Ended>> waiting = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;

    /**
     * The relay is stopping: delivery ends, so no wait would end but by its timeout — and the stop would wait for it.
     * Every wait is answered now (504 with what is still pending, or 200 if it drained meanwhile), and so is every
     * request that comes while the stop goes on.
     */
    @Override
    public void prepareShutdown(boolean suspendOnly, boolean forced) {
        if (suspendOnly) {
            return;
        }
        stopping = true;
        waiting.forEach(wait -> wait.complete(Ended.TIME_UP));
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        HttpServerRequest request = VertxExchange.request(exchange);
        Wait wait;
        try {
            wait = read(request);
        } catch (Refused refused) {
            Answers.line(exchange.getMessage(), refused.status, refused.getMessage())
                    .setHeader(ID_HEADER, spool.id());
            callback.done(true);
            return true;
        }
        long started = System.nanoTime();
        CompletableFuture<Void> drained = spool.awaitLeft(wait.seq());
        if (drained.isDone()) {
            answer(exchange.getMessage(), 200, wait, started);
            callback.done(true);
            return true;
        }
        CompletableFuture<Ended> ended = new CompletableFuture<>();
        waiting.add(ended);
        if (stopping) {
            ended.complete(Ended.TIME_UP);
        }
        drained.thenRun(() -> ended.complete(Ended.DRAINED));
        request.response().closeHandler(closed -> ended.complete(Ended.GONE));
        Context context = Vertx.currentContext();
        if (context != null) {
            long timer = context.owner().setTimer(Math.max(1, wait.timeout().toMillis()),
                    fired -> ended.complete(Ended.TIME_UP));
            ended.whenComplete((why, failure) -> context.owner().cancelTimer(timer));
        } else {
            ended.completeOnTimeout(Ended.TIME_UP, wait.timeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        ended.whenComplete((why, failure) -> {
            waiting.remove(ended);
            if (why != Ended.DRAINED) {
                spool.stopAwaiting(wait.seq(), drained);
            }
        });
        return Resume.after(ended, exchange, callback, (why, failure) -> {
            // drained a moment ago, its callback not run yet: then it is a 200, not a 504 with nothing pending
            boolean done = why == Ended.DRAINED || drained.isDone() || spool.waitingThrough(wait.seq()) == 0;
            answer(exchange.getMessage(), done ? 200 : 504, wait, started);
        });
    }

    private Wait read(HttpServerRequest request) {
        if (!keyCheck.admits(request)) {
            throw new Refused(401, IngestRefusal.unauthorized().reason());
        }
        MultiMap parameters = request.params();
        for (String name : parameters.names()) {
            if (!PARAMETERS.contains(name)) {
                throw new Refused(400, "unknown parameter; /relay/sync takes seq, from, relay and timeout");
            }
            if (parameters.getAll(name).size() > 1) {
                throw new Refused(400, name + " is given more than once");
            }
        }
        String seqText = parameters.get("seq");
        if (seqText == null || !SEQ.matcher(seqText).matches()) {
            throw new Refused(400, "seq must be a sequence number from an mcpd-relay-seq header (digits)");
        }
        Duration timeout = timeout(parameters.get("timeout"));
        String relay = parameters.get("relay");
        if (relay != null && !ID.matcher(relay).matches()) {
            throw new Refused(400, "relay must be an id from an mcpd-relay-id header (32 hex digits)");
        }
        if (relay != null && !relay.equals(spool.id())) {
            throw new Refused(421, "this is relay " + spool.id() + ", not the one that handed out this sequence"
                    + " number: ask that relay, by its own address");
        }
        long seq = Long.parseLong(seqText);
        if (seq > spool.newestSeq()) {
            throw new Refused(409, "relay " + spool.id() + " has handed out sequence numbers up to "
                    + spool.newestSeq() + " only: this one belongs to another relay or to a spool that no longer"
                    + " exists");
        }
        long from = 1;
        String fromText = parameters.get("from");
        if (fromText != null) {
            if (!SEQ.matcher(fromText).matches() || Long.parseLong(fromText) > seq) {
                throw new Refused(400, "from must be a sequence number no larger than seq: the first this job was"
                        + " handed");
            }
            from = Long.parseLong(fromText);
        }
        return new Wait(seq, from, timeout);
    }

    private static Duration timeout(String text) {
        if (text == null) {
            return InternalTuning.DEFAULT.syncTimeout();
        }
        try {
            return WaitDuration.parse("timeout", text);
        } catch (IllegalArgumentException e) {
            throw new Refused(400, e.getMessage());
        }
    }

    private void answer(Message answer, int status, Wait wait, long startedNanos) {
        long seq = wait.seq();
        waits.record(Duration.ofNanos(System.nanoTime() - startedNanos));
        long pending = status == 200 ? 0 : spool.waitingThrough(seq);
        Answers.write(answer, status, Answers.JSON, Answers.text("{\"relay\":\"" + spool.id() + "\",\"seq\":" + seq
                + ",\"pending\":" + pending + ",\"deadLettered\":" + deadLetters.recentCountBetween(wait.from(), seq)
                + "}")).setHeader(ID_HEADER, spool.id());
    }
}
