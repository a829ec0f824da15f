package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.RequestFormat;
import dev.mcpd.http.SenderKeyCheck;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.logs.RateLimitedLog;
import dev.mcpd.routing.Resume;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolFullException;
import dev.mcpd.spool.SpoolRequest;
import io.vertx.core.http.HttpServerRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongConsumer;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;
import org.slf4j.LoggerFactory;

/**
 * Writes the request to the spool and goes on only once it is durable: the answer that follows is a promise.
 * Concurrent requests share one fsync (the spool's group commit), so waiting here costs one commit, not one per
 * request; the wait blocks no thread (the route resumes on the request's event loop when the commit is done). When the spool cannot take it, the sender is told to retry (503) and nothing of the request is kept.
 *
 * <p>The sender's credential is kept with the entry only when the relay has no {@code --upstream-key} of its own
 *: then it is what the upstream will check.
 */
public final class SpoolWriteStep extends AsyncProcessorSupport {



    /** A full disk fails every request: one line a second tells the story. */
    private static final RateLimitedLog LOG =
            new RateLimitedLog(LoggerFactory.getLogger(SpoolWriteStep.class), Duration.ofSeconds(1));

    private final Spool spool;
    private final boolean passSenderCredential;
    private final EntryFates fates;

    public SpoolWriteStep(Spool spool, boolean passSenderCredential, EntryFates fates) {
        this.spool = spool;
        this.passSenderCredential = passSenderCredential;
        this.fates = fates;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        HttpServerRequest request = VertxExchange.request(exchange);
        RequestFormat format = RequestFormat.of(exchange);
        SpoolRequest entry = new SpoolRequest(
                request.method().name(),
                IngestTargetCheck.of(exchange).text(),
                format.contentType(),
                format.contentEncoding(),
                IngestExchange.key(exchange),
                passSenderCredential ? senderCredential(exchange, request) : Optional.empty(),
                exchange.getClock().getCreated(),
                exchange.getIn().getBody(byte[].class),
                IngestExchange.forwarded(exchange),
                IngestExchange.remoteWrite(exchange));
        // A sender that waits for its entry's fate registers before delivery can take it.
        LongConsumer awaited = IngestExchange.wait(exchange).isEmpty() ? null
                : seq -> IngestExchange.setFate(exchange, fates.expect(seq));
        return Resume.after(spool.append(entry, awaited), exchange, callback, (receipt, failure) -> {
            if (failure == null) {
                IngestExchange.setSeq(exchange, receipt.seq());
            } else if (failure instanceof SpoolFullException) {
                throw IngestRefusal.spoolFull(false);
            } else {
                LOG.warn("spool-write", "spool write failed, answering 503: " + failure.getMessage());
                throw IngestRefusal.unavailable("the spool could not store the request; retry later");
            }
        });
    }

    /**
     * The credential passed on: with {@code --ingest-key}, the one header that was verified; on an open relay, which
     * can verify neither, {@code Authorization} if sent (the standard header, what SDKs send), else {@code x-mcpd-key}.
     */
    private static Optional<Credential> senderCredential(Exchange exchange, HttpServerRequest request) {
        String verified = SenderKeyCheck.verifiedBy(exchange);
        String[] candidates = verified != null ? new String[] {verified} : new String[] {"Authorization", "x-mcpd-key"};
        for (String header : candidates) {
            String value = request.getHeader(header);
            if (value != null) {
                return Optional.of(new Credential(header, value));
            }
        }
        return Optional.empty();
    }
}
