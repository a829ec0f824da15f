package dev.mcpd.http;

import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import org.apache.camel.Exchange;
import org.apache.camel.component.platform.http.vertx.HttpMessage;

/** The Vert.x request and response behind a platform-http exchange. */
public final class VertxExchange {

    private VertxExchange() {
    }

    public static HttpServerRequest request(Exchange exchange) {
        return httpMessage(exchange).getRequest();
    }

    public static HttpServerResponse response(Exchange exchange) {
        return httpMessage(exchange).getResponse();
    }

    private static HttpMessage httpMessage(Exchange exchange) {
        HttpMessage message = exchange.getIn(HttpMessage.class);
        if (message == null) {
            throw new IllegalStateException("not a platform-http (Vert.x) exchange");
        }
        return message;
    }
}
