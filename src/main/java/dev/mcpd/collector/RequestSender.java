package dev.mcpd.collector;

import dev.mcpd.http.SenderKeyCheck;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.store.Sender;
import dev.mcpd.wire.SenderDigest;
import io.vertx.core.http.HttpServerRequest;
import org.apache.camel.Exchange;

/** The {@link Sender} of the request on an exchange: the credential it presented, or the one that was verified. */
final class RequestSender {

    private RequestSender() {
    }

    static Sender of(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        String verified = SenderKeyCheck.verifiedBy(exchange);
        String authorization = request.getHeader("Authorization");
        String key = request.getHeader("x-mcpd-key");
        if ("x-mcpd-key".equals(verified) || (authorization == null && key != null)) {
            return Sender.presenting(key);
        }
        if (authorization == null) {
            return Sender.NONE;
        }
        return Sender.presenting(SenderDigest.credentialOf("Authorization", authorization));
    }
}
