package dev.mcpd.endpoint;

import dev.mcpd.routing.Resume;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolRequest;
import java.util.function.LongConsumer;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.support.DefaultAsyncProducer;

/**
 * {@code to: spool:relay}: writes the message to the spool ({@link SpoolMessage} says how it is read) and the route
 * goes on once it is durable, with the entry's sequence number in {@value SpoolMessage#SEQ}. Concurrent writes share
 * one fsync (the spool's group commit), and the wait blocks no event loop: the route resumes on the one it came from.
 * When the spool is at its bound the exchange fails with {@link dev.mcpd.spool.SpoolFullException}; when the write
 * fails, with the spool's failure. Either way nothing of the message is kept, and the route's error handling says
 * what the sender hears (the ingest route: 503 and {@code Retry-After}).
 */
final class SpoolProducer extends DefaultAsyncProducer {

    private final Spool spool;
    private final EntryFates fates;
    private final long maxBodyBytes;

    SpoolProducer(SpoolEndpoint endpoint, Spool spool, EntryFates fates, long maxBodyBytes) {
        super(endpoint);
        this.spool = spool;
        this.fates = fates;
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        SpoolRequest request;
        try {
            request = SpoolMessage.request(exchange, maxBodyBytes);
        } catch (IllegalArgumentException e) {
            exchange.setException(e);
            callback.done(true);
            return true;
        }
        // A sender that waits for its entry's fate registers before delivery can take the entry.
        LongConsumer beforeDelivery = SpoolMessage.awaitsFate(exchange)
                ? seq -> SpoolMessage.setFate(exchange, fates.expect(seq)) : null;
        return Resume.after(spool.append(request, beforeDelivery), exchange, callback, (receipt, failure) -> {
            if (failure != null) {
                exchange.setException(failure);
                return;
            }
            exchange.getMessage().setHeader(SpoolMessage.SEQ, receipt.seq());
        });
    }
}
