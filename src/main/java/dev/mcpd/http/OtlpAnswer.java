package dev.mcpd.http;

import dev.mcpd.wire.Otlp;
import org.apache.camel.Exchange;
import org.apache.camel.Message;

/** The answer the front door gives an OTLP export it took, over HTTP or gRPC. */
public final class OtlpAnswer {

    private OtlpAnswer() {
    }

    /**
     * The answer an OpenTelemetry exporter expects: 200 with an empty partial-success response, JSON when the request
     * was JSON, else protobuf (an empty {@code Export*ServiceResponse}: all its fields absent, zero bytes); to a gRPC
     * Export call, {@code OK} with that empty response. Returns the message, for headers of its own.
     */
    public static Message partialSuccess(Exchange exchange) {
        if (GrpcCall.of(exchange) != null) {
            return GrpcAnswer.ok(exchange);
        }
        String requestContentType = VertxExchange.request(exchange).getHeader("Content-Type");
        return Answers.write(exchange.getMessage(), 200, Otlp.answerContentType(requestContentType),
                Answers.of(Otlp.emptyAnswer(requestContentType)));
    }
}
