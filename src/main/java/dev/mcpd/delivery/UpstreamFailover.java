package dev.mcpd.delivery;

import dev.mcpd.http.RequestTarget;
import dev.mcpd.http.RootCause;
import java.net.SocketTimeoutException;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.apache.camel.AsyncCallback;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Exchange;
import org.apache.camel.processor.loadbalancer.LoadBalancerSupport;
import org.apache.camel.support.ExchangeHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ordered failover across upstreams with per-upstream waits (SPEC §3), as a Camel custom load balancer. Its one child
 * sends the request to the upstream chosen for the attempt (the {@code CamelHttpUri} header); the state that Camel's
 * own failover load balancer lacks — which upstream waits, until when — lives in the {@link UpstreamBoard}.
 *
 * <p>Each attempt goes to the first upstream that is not waiting, on a copy of the exchange. A retryable failure puts
 * that upstream into a wait and the request moves at once to the next one; when all wait, the request waits for the
 * earliest. A delivery or a permanent refusal ends the loop; the {@link Attempt} is left on the exchange
 * ({@link DeliveryExchange}) for the steps after the load balancer. When the relay stops, a request still waiting
 * fails with {@link DeliveryStopped} and stays in the spool.
 */
public final class UpstreamFailover extends LoadBalancerSupport {

    private static final Logger LOG = LoggerFactory.getLogger(UpstreamFailover.class);
    private static final Duration STOP_CHECK = Duration.ofMillis(250);

    private final UpstreamBoard board;
    private final boolean relayPresentsOwnKey;
    private final InstantSource clock;

    public UpstreamFailover(UpstreamBoard board, boolean relayPresentsOwnKey, InstantSource clock) {
        this.board = board;
        this.relayPresentsOwnKey = relayPresentsOwnKey;
        this.clock = clock;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        AsyncProcessor send = getProcessors().get(0);
        String target = DeliveryExchange.entry(exchange).request().target();
        Set<Integer> tried = new HashSet<>();
        try {
            while (true) {
                Upstream upstream = board.awaitReady(tried,
                        () -> !isRunAllowed() || exchange.getContext().isStopping(), STOP_CHECK);
                String url;
                try {
                    url = upstream.urlFor(target);
                } catch (RequestTarget.InvalidTarget e) {
                    // The entry's fault, not the upstream's: it goes to dead/, and no upstream waits for it.
                    exchange.setException(PermanentRefusal.unsendable(upstream.label(), e.getMessage()));
                    break;
                }
                Exchange copy = ExchangeHelper.createCopy(exchange, true);
                copy.getIn().setHeader(Exchange.HTTP_URI, url);
                long started = System.nanoTime();
                send.process(copy);
                if (copy.getException() != null && (!isRunAllowed() || exchange.getContext().isStopping())) {
                    throw new DeliveryStopped(); // a producer stopped under it says nothing about the entry
                }
                Optional<String> unbuildable = requestNotBuilt(copy.getException());
                if (unbuildable.isPresent()) {
                    exchange.setException(PermanentRefusal.unsendable(upstream.label(), unbuildable.get()));
                    break;
                }
                Attempt attempt = attemptOf(upstream, copy, Duration.ofNanos(System.nanoTime() - started));
                if (attempt.kind() == Attempt.Kind.RETRYABLE) {
                    retryElsewhere(attempt);
                    tried.add(upstream.order());
                    continue;
                }
                if (attempt.kind() == Attempt.Kind.DELIVERED) {
                    board.delivered(upstream, attempt.status().getAsInt(), attempt.latency());
                } else {
                    board.refusedPermanently(upstream, attempt.status().getAsInt(), attempt.latency());
                }
                ExchangeHelper.copyResults(exchange, copy);
                DeliveryExchange.setAttempt(exchange, attempt);
                break;
            }
        } catch (DeliveryStopped e) {
            exchange.setException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exchange.setException(new DeliveryStopped());
        } catch (Exception e) {
            exchange.setException(e);
        }
        callback.done(true);
        return true;
    }

    private void retryElsewhere(Attempt attempt) {
        board.failed(attempt.upstream(), attempt.cause(), attempt.status(), attempt.retryAfter(), attempt.latency());
        int status = attempt.status().orElse(0);
        if ((status == 401 || status == 403) && relayPresentsOwnKey) {
            LOG.error("upstream={} refused the relay's own --upstream-key with {}: fix the key; requests stay in the "
                    + "spool and are retried", attempt.upstream().label(), status);
        }
    }

    private Attempt attemptOf(Upstream upstream, Exchange copy, Duration latency) {
        Exception failure = copy.getException();
        if (failure != null) {
            return new Attempt(upstream, Attempt.Kind.RETRYABLE, OptionalInt.empty(), describe(failure),
                    Optional.empty(), latency, new byte[0]);
        }
        int status = copy.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, 0, Integer.class);
        byte[] answer = copy.getMessage().getBody(byte[].class);
        Optional<Duration> retryAfter = RetryAfter.parse(copy.getMessage().getHeader("Retry-After", String.class),
                clock.instant());
        return new Attempt(upstream, Attempt.classify(status, relayPresentsOwnKey), OptionalInt.of(status),
                Integer.toString(status), retryAfter, latency, answer == null ? new byte[0] : answer);
    }

    /**
     * Why the HTTP client could not even make a request of the entry, when that is what failed: camel-http reports it
     * as an {@link IllegalArgumentException} or a {@link URISyntaxException} before it opens a connection. A failure
     * of the connection or of the upstream's answer is an {@link java.io.IOException}, and is retried.
     */
    private static Optional<String> requestNotBuilt(Exception failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof java.io.IOException) {
                return Optional.empty();
            }
            if (cause instanceof IllegalArgumentException || cause instanceof URISyntaxException) {
                return Optional.of("the HTTP client could not make a request of it ("
                        + cause.getClass().getSimpleName() + ")");
            }
        }
        return Optional.empty();
    }

    /** One line for a transport failure: "connection refused", "read timeout", … */
    private static String describe(Exception failure) {
        Throwable root = RootCause.of(failure);
        if (root instanceof SocketTimeoutException) {
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
