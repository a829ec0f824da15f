package dev.mcpd.ingest;

import dev.mcpd.spool.ForwardedHeader;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.camel.Exchange;

/**
 * What the ingest route's steps hand each other on the exchange, in one place: the idempotency key (set by
 * {@link IdempotencyKey}), how long a sender waits for its entry's fate (set by {@link WaitRequest}), the forwarded
 * headers and whether it is a remote write (set by {@link StreamHeaders}). What the front door learned of the request
 * is {@code http}'s, behind its own accessors; what the spool write left (the sequence number, the fate) is
 * {@link dev.mcpd.endpoint.SpoolMessage}'s.
 */
final class IngestExchange {

    private static final String KEY = "mcpd.idempotencyKey";
    private static final String WAIT = "mcpd.relayWait";
    private static final String FORWARDED = "mcpd.forwarded";
    private static final String REMOTE_WRITE = "mcpd.remoteWrite";

    private IngestExchange() {
    }

    static void setKey(Exchange exchange, String key) {
        exchange.setProperty(KEY, key);
    }

    static String key(Exchange exchange) {
        return exchange.getProperty(KEY, String.class);
    }

    static void setWait(Exchange exchange, Duration wait) {
        exchange.setProperty(WAIT, wait);
    }

    /** How long the sender waits for its entry's fate ({@code mcpd-relay-wait}), if it asked. */
    static Optional<Duration> wait(Exchange exchange) {
        return Optional.ofNullable(exchange.getProperty(WAIT, Duration.class));
    }

    static void setStream(Exchange exchange, List<ForwardedHeader> forwarded, boolean remoteWrite) {
        exchange.setProperty(FORWARDED, forwarded);
        exchange.setProperty(REMOTE_WRITE, remoteWrite);
    }

    /** The sender's headers kept with the entry ({@link StreamHeaders}); none when that step did not run. */
    @SuppressWarnings("unchecked")
    static List<ForwardedHeader> forwarded(Exchange exchange) {
        List<ForwardedHeader> forwarded = exchange.getProperty(FORWARDED, List.class);
        return forwarded == null ? List.of() : forwarded;
    }

    /** Whether it came with {@code X-Prometheus-Remote-Write-Version} ({@link StreamHeaders}). */
    static boolean remoteWrite(Exchange exchange) {
        return Boolean.TRUE.equals(exchange.getProperty(REMOTE_WRITE, Boolean.class));
    }

}
