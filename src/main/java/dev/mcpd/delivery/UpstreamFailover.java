package dev.mcpd.delivery;

import dev.mcpd.upstream.RetryAfter;
import dev.mcpd.upstream.BatchAnswer;
import dev.mcpd.upstream.DeliveryStopped;

import dev.mcpd.upstream.Upstream;
import dev.mcpd.upstream.UpstreamBoard;
import dev.mcpd.upstream.UpstreamWindow;

import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import dev.mcpd.logs.RootCause;
import dev.mcpd.spool.SpoolEntry;
import java.net.SocketTimeoutException;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.apache.camel.AsyncCallback;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Exchange;
import org.apache.camel.processor.loadbalancer.LoadBalancerSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ordered failover across upstreams with per-upstream waits and windows, as a Camel custom load balancer. Its one
 * child sends the request to the upstream chosen for the attempt; the state that Camel's own failover load balancer
 * lacks — which upstream waits, until when, how many requests it may have in flight — lives in the
 * {@link UpstreamBoard}.
 *
 * <p>An attempt goes to the first upstream that is not waiting, once that upstream's window has a place: the delivery
 * lane that carries the entry waits for both, and then the request goes out asynchronously — the lane is free for the
 * next entry while this one crosses the link. When the answer comes, a delivery or a permanent refusal ends the
 * attempt here ({@link Attempt} on the exchange for the steps after the load balancer); a retryable failure makes that
 * upstream wait and ends the exchange with {@link RetryElsewhere}, so the entry goes back to the spool first in line
 * and the next lane sends it to the next upstream at once. When the relay stops, a request still waiting fails with
 * {@link DeliveryStopped} and stays in the spool.
 */
public final class UpstreamFailover extends LoadBalancerSupport {

    private static final Logger LOG = LoggerFactory.getLogger(UpstreamFailover.class);
    private static final Duration STOP_CHECK = Duration.ofMillis(250);
    private final RateLimitedLog splits = new RateLimitedLog(LOG, Duration.ofSeconds(10));
    /**
     * The upstreams each entry has failed on, while it moves between them. Entries out or given back are few (lanes
     * plus windows); the bound only guards against a leak, and forgetting costs at most one extra attempt.
     */
    private static final int MAX_REMEMBERED = 100_000;

    private final UpstreamBoard board;
    private final StatusPolicy statuses;
    private final InstantSource clock;
    private final Map<Long, Set<Integer>> triedBySeq = new ConcurrentHashMap<>();

    private final SpoolExpiry expiry;
    private final EntryAttempts attempts;

    public UpstreamFailover(UpstreamBoard board, StatusPolicy statuses, SpoolExpiry expiry, EntryAttempts attempts,
                            InstantSource clock) {
        this.expiry = expiry;
        this.attempts = attempts;
        this.board = board;
        this.statuses = statuses;
        this.clock = clock;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        Shipment shipment = DeliveryExchange.shipment(exchange);
        long seq = shipment.first().seq();
        String target = shipment.batch() ? RelayBatch.PATH : shipment.first().request().target();
        Set<Integer> tried = triedBySeq.computeIfAbsent(seq, unused -> ConcurrentHashMap.newKeySet());
        if (triedBySeq.size() > MAX_REMEMBERED) {
            triedBySeq.clear();
        }
        Upstream upstream;
        UpstreamWindow.Slot slot;
        try {
            while (true) {
                upstream = board.awaitReady(tried, () -> stopping(exchange) || expiry.anyExpired(shipment),
                        STOP_CHECK);
                if (shipment.size() > 1 && upstream.isKafka()) {
                    return finish(exchange, new SendAlone(upstream.label() + " takes one record per entry"), callback);
                }
                if (shipment.batch() && !board.offer(upstream).batches()) {
                    return finish(exchange, new SendAlone(upstream.label() + " takes no relay batches"), callback);
                }
                if (shipment.merge() && board.offer(upstream).batches()) {
                    // An mcpd collector keeps every entry's own key: the entries go to it alone, or batched.
                    return finish(exchange, new SendAlone(upstream.label() + " takes relay batches"), callback);
                }
                Optional<UpstreamWindow.Slot> place = board.window(upstream).acquire();
                if (place.isPresent()) {
                    slot = place.get();
                    break;
                }
                if (stopping(exchange)) {
                    throw new DeliveryStopped();
                }
            }
        } catch (DeliveryStopped e) {
            if (!stopping(exchange) && expiry.anyExpired(shipment)) {
                // Waited for an upstream past --spool-max-age: a lone entry goes to dead/ as expired; those of a batch or
                // merge go back to the spool, where the expiry sweep (or a lane, once an upstream is ready) takes them.
                triedBySeq.remove(seq);
                return finish(exchange, shipment.size() > 1 ? e : expiry.refusal(shipment.first()), callback);
            }
            return finish(exchange, e, callback);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return finish(exchange, new DeliveryStopped(), callback);
        }
        String at;
        try {
            at = upstream.isKafka() ? target : upstream.targetFor(target); // a record's header says its target
        } catch (RequestTarget.InvalidTarget e) {
            // The entry's fault, not the upstream's: it goes to dead/, and no upstream waits for it.
            slot.unused();
            triedBySeq.remove(seq);
            return finish(exchange, PermanentRefusal.unsendable(upstream.label(), e.getMessage()), callback);
        }
        DeliveryExchange.setDestination(exchange, upstream, at);
        board.sending(upstream);
        long started = System.nanoTime();
        Upstream chosen = upstream;
        UpstreamWindow.Slot place = slot;
        AsyncProcessor send = sender(chosen);
        return send.process(exchange, doneSync -> {
            try {
                answered(exchange, chosen, place, Duration.ofNanos(System.nanoTime() - started), tried);
            } catch (RuntimeException e) {
                place.unused();
                exchange.setException(e);
            }
            callback.done(doneSync);
        });
    }

    /**
     * The child that carries an attempt to {@code upstream}: the load balancer's first for HTTP upstreams, its second
     * for Kafka topics (deliver.camel.yaml lists them in that order). Chosen here, with the upstream, rather than by
     * a choice in the route, which would cost every delivery an expression.
     */
    private AsyncProcessor sender(Upstream upstream) {
        List<AsyncProcessor> senders = getProcessors();
        if (upstream.isKafka() && senders.size() < 2) {
            throw new IllegalStateException("the delivery route names no sender for Kafka upstreams");
        }
        return senders.get(upstream.isKafka() ? 1 : 0);
    }

    private boolean stopping(Exchange exchange) {
        return !isRunAllowed() || exchange.getContext().isStopping();
    }

    private static boolean finish(Exchange exchange, Exception failure, AsyncCallback callback) {
        exchange.setException(failure);
        callback.done(true);
        return true;
    }

    /** What the answer to one attempt means, for the upstream's wait and window and for the entries. */
    private void answered(Exchange exchange, Upstream upstream, UpstreamWindow.Slot slot, Duration latency,
                          Set<Integer> tried) {
        Shipment shipment = DeliveryExchange.shipment(exchange);
        long seq = shipment.first().seq();
        UpstreamAnswer answer = DeliveryExchange.answer(exchange);
        if (answer.failure() != null && stopping(exchange)) {
            slot.unused();
            throw new DeliveryStopped(); // a client closed under it says nothing about the entry
        }
        if (answer.failure() instanceof KafkaFailures.Refused refused) {
            // The broker refused the record for good: it would refuse it again, from any relay.
            slot.answered();
            triedBySeq.remove(seq);
            board.refusedPermanently(upstream, OptionalInt.empty(), latency, 1);
            throw PermanentRefusal.refusedByBroker(upstream.label(), refused.getMessage());
        }
        Optional<String> unbuildable = requestNotBuilt(answer.failure());
        if (unbuildable.isPresent()) {
            slot.unused();
            triedBySeq.remove(seq);
            if (shipment.size() > 1) {
                throw new SendAlone(upstream.label() + ": " + unbuildable.get()); // each entry gets its own verdict
            }
            throw PermanentRefusal.unsendable(upstream.label(), unbuildable.get());
        }
        Attempt attempt = attemptOf(upstream, answer, latency);
        Optional<BatchAnswer> batchAnswer = Optional.empty();
        if (shipment.batch() && attempt.kind() == Attempt.Kind.DELIVERED) {
            batchAnswer = BatchAnswer.parse(attempt.answer(), shipment.size());
            if (batchAnswer.isEmpty()) {
                // It took the request but its answer says nothing of the entries: send them again (their keys make
                // any copy it kept harmless), elsewhere while it waits.
                attempt = attempt.retryable("a 2xx to the batch without an answer for each entry");
            }
        }
        if (attempt.kind() == Attempt.Kind.RETRYABLE) {
            if (attempt.saysOverloaded()) {
                slot.dropped();
            } else {
                slot.unused(); // down or broken, not overloaded: its wait deals with that, its window stays
            }
            retryElsewhere(attempt, shipment.size());
            recordFailure(shipment.entries(), upstream, attempt.cause());
            tried.add(upstream.order());
            throw new RetryElsewhere(upstream.label() + ": " + attempt.cause());
        }
        slot.answered();
        triedBySeq.remove(seq);
        if (shipment.batch() && attempt.kind() == Attempt.Kind.PERMANENT) {
            // The request as a whole was refused (its framing, its size, its key): each entry goes alone and gets
            // its own answer; none is dead-lettered for the batch.
            board.refusedPermanently(upstream, attempt.status(), attempt.latency(), 0);
            recordFailure(shipment.entries(), upstream, attempt.cause() + " to a batch of " + shipment.size());
            throw new SendAlone(upstream.label() + " refused the batch with " + attempt.cause());
        }
        if (shipment.merge() && attempt.kind() == Attempt.Kind.PERMANENT) {
            recordFailure(shipment.entries(), upstream, attempt.cause() + " to a merge of " + shipment.size());
            throw splitOrAlone(upstream, shipment, attempt);
        }
        if (batchAnswer.isPresent()) {
            long archived = batchAnswer.get().entries().stream().filter(e -> e.status() / 100 == 2).count();
            if (archived > 0) {
                board.delivered(upstream, attempt.status().getAsInt(), attempt.latency(), (int) archived);
            }
            long refused = batchAnswer.get().entries().stream()
                    .filter(e -> statuses.classify(e.status()) == Attempt.Kind.PERMANENT).count();
            if (refused > 0) {
                board.refusedPermanently(upstream, attempt.status(), attempt.latency(), (int) refused);
            }
            waitForRetryableEntries(upstream, shipment, batchAnswer.get(), answer, attempt.latency());
            DeliveryExchange.setBatchAnswer(exchange, batchAnswer.get());
        } else if (attempt.kind() == Attempt.Kind.DELIVERED) {
            board.delivered(upstream, attempt.status().getAsInt(), attempt.latency(), shipment.size());
        } else {
            board.refusedPermanently(upstream, attempt.status(), attempt.latency(), 1);
        }
        DeliveryExchange.setAttempt(exchange, attempt);
    }

    /**
     * A merged request refused for good: which of its entries is refused, it does not say. A refused credential
     * concerns them all, so each goes alone at once; any other refusal splits the merge in halves, tried apart, until
     * the refused entries travel alone and get their own answers.
     */
    private RuntimeException splitOrAlone(Upstream upstream, Shipment shipment, Attempt attempt) {
        int status = attempt.status().getAsInt();
        board.refusedPermanently(upstream, OptionalInt.of(status), attempt.latency(), 0);
        String why = upstream.label() + " refused a merge of " + shipment.size() + " entries with " + status;
        if (status == 401 || status == 403 || status == 407) {
            splits.warn("merge-credential", "upstream=" + upstream.label() + " order=" + upstream.order()
                    + " refused a merged request of " + shipment.size() + " entries with " + status
                    + ": each goes alone");
            return new SendAlone(why);
        }
        splits.warn("merge-split", "upstream=" + upstream.label() + " order=" + upstream.order()
                + " refused a merged request of " + shipment.size() + " entries with " + status
                + ": its halves are tried apart until the refused entries travel alone");
        return new SplitMerge(why, shipment.size());
    }

    /**
     * Entries of a batch answered with a retryable status (a store that is busy says 503 for each) make the upstream
     * wait, as the same answer to a single entry does: otherwise they would come straight back to it, batch after
     * batch, and never reach the next upstream.
     */
    private void waitForRetryableEntries(Upstream upstream, Shipment shipment, BatchAnswer batch, UpstreamAnswer answer,
                                         Duration latency) {
        List<BatchAnswer.EntryOutcome> retryable = batch.entries().stream()
                .filter(e -> statuses.classify(e.status()) == Attempt.Kind.RETRYABLE).toList();
        if (retryable.isEmpty()) {
            return;
        }
        for (int i = 0; i < batch.entries().size(); i++) {
            int entryStatus = batch.entries().get(i).status();
            if (statuses.classify(entryStatus) == Attempt.Kind.RETRYABLE) {
                recordFailure(List.of(shipment.entries().get(i)), upstream, entryStatus + " for it in a batch");
            }
        }
        int status = retryable.get(0).status();
        board.failed(upstream, retryable.size() + " of the batch's " + shipment.size() + " entries answered " + status,
                OptionalInt.of(status), RetryAfter.parse(answer.retryAfter(), clock.instant()), latency,
                retryable.size());
    }

    /**
     * Counted per failed attempt only, off the success path: a delivery never records anything here (the spool
     * consumer's one removal per finished entry is all it costs).
     */
    private void recordFailure(List<SpoolEntry> entries, Upstream upstream, String what) {
        String line = "upstream=" + upstream.label() + " " + what;
        entries.forEach(entry -> attempts.failed(entry, line));
    }

    private void retryElsewhere(Attempt attempt, int entries) {
        board.failed(attempt.upstream(), attempt.cause(), attempt.status(), attempt.retryAfter(), attempt.latency(),
                entries);
        int status = attempt.status().orElse(0);
        if ((status == 401 || status == 403) && statuses.relayPresentsOwnKey()) {
            LOG.error("upstream={} refused the relay's own --upstream-key with {}: fix the key; requests stay in the "
                    + "spool and are retried", attempt.upstream().label(), status);
        }
    }

    private Attempt attemptOf(Upstream upstream, UpstreamAnswer answer, Duration latency) {
        Throwable failure = answer.failure();
        if (failure != null) {
            return new Attempt(upstream, Attempt.Kind.RETRYABLE, OptionalInt.empty(), describe(failure),
                    Optional.empty(), latency, new byte[0], isTimeout(failure));
        }
        Optional<Duration> retryAfter = RetryAfter.parse(answer.retryAfter(), clock.instant());
        return new Attempt(upstream, statuses.classify(answer.status()), OptionalInt.of(answer.status()),
                Integer.toString(answer.status()), retryAfter, latency, answer.body(), false);
    }

    /**
     * Why the HTTP client could not even make a request of the entry, when that is what failed: the client reports
     * it as an {@link IllegalArgumentException} or a {@link URISyntaxException} before it opens a connection. A
     * failure of the connection or of the upstream's answer is an {@link java.io.IOException} or a timeout, and is
     * retried.
     */
    private static Optional<String> requestNotBuilt(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof java.io.IOException || cause instanceof TimeoutException) {
                return Optional.empty();
            }
            if (cause instanceof IllegalArgumentException || cause instanceof URISyntaxException) {
                return Optional.of("the HTTP client could not make a request of it ("
                        + cause.getClass().getSimpleName() + ")");
            }
        }
        return Optional.empty();
    }

    private static boolean isTimeout(Throwable failure) {
        Throwable root = RootCause.of(failure);
        return root instanceof SocketTimeoutException || root instanceof TimeoutException;
    }

    /** One line for a transport failure: "connection refused", "timeout: …", a TLS handshake in plain words… */
    private static String describe(Throwable failure) {
        Optional<String> tls = TlsFailure.explain(failure);
        if (tls.isPresent()) {
            return tls.get();
        }
        Throwable root = RootCause.of(failure);
        if (isTimeout(failure)) {
            return "timeout: " + root.getMessage();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    @Override
    protected void doStop() throws Exception {
        board.close();
        super.doStop();
    }
}
