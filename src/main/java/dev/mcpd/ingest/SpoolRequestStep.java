package dev.mcpd.ingest;

import dev.mcpd.endpoint.SpoolMessage;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.RequestFormat;
import dev.mcpd.http.SenderKeyCheck;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.SpoolRequest;
import io.vertx.core.http.HttpServerRequest;
import java.util.Optional;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The request as the spool keeps it, put on the message as its body for {@code to: spool:relay} to write: what the
 * sender sent (method, target, format, the body as the steps before left it) with what the steps before learned of
 * it (its idempotency key, its forwarded headers, whether it is a remote write). A sender that waits for its entry's
 * fate ({@code mcpd-relay-wait}) has it registered by the write, before delivery can take the entry.
 *
 * <p>The sender's credential is kept with the entry only when the relay has no {@code --upstream-key} of its own:
 * then it is what the upstream will check.
 */
public final class SpoolRequestStep implements Processor {

    private final boolean passSenderCredential;

    public SpoolRequestStep(boolean passSenderCredential) {
        this.passSenderCredential = passSenderCredential;
    }

    @Override
    public void process(Exchange exchange) {
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
        exchange.getIn().setBody(entry);
        if (IngestExchange.wait(exchange).isPresent()) {
            SpoolMessage.awaitFate(exchange);
        }
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
