package dev.mcpd.http;

import dev.mcpd.wire.FieldContent;
import io.vertx.core.http.HttpServerRequest;
import java.util.List;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The headers a request is kept and forwarded with — {@code Content-Type}, {@code Content-Encoding},
 * {@code Authorization}, {@code x-mcpd-key}, {@code Idempotency-Key} — must be valid field content (RFC 9110 section 5.5:
 * no control character but a tab), on every protocol: HTTP/1.1's parser refuses a CR or LF in a header itself, but
 * HTTP/2 (and so gRPC metadata) carries any byte in a value. One that is not is refused with 400 before anything is
 * kept: it would be acknowledged and then be impossible to send upstream (or, in a credential, a header injected into
 * the upstream request).
 */
public final class HeaderFieldCheck implements Processor {

    static final List<String> KEPT = List.of("Content-Type", "Content-Encoding", "Authorization", "x-mcpd-key",
            "Idempotency-Key", "mcpd-relay-wait");

    @Override
    public void process(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        for (String name : KEPT) {
            for (String value : request.headers().getAll(name)) {
                if (!FieldContent.isValid(value)) {
                    throw IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_FRAMING, "the " + name
                            + " header holds a control character (CR, LF, NUL, …): not a valid header value");
                }
            }
        }
    }
}
