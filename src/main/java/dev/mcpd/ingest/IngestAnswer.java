package dev.mcpd.ingest;

import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * The answer to a request that is in the spool (SPEC §2). OTLP paths get what an OpenTelemetry exporter expects:
 * 200 with an empty partial-success response, protobuf or JSON like the request. Every other path gets 202 with zero
 * counts: the true counts belong to the upstream, which has not seen the request yet. Both carry
 * {@code mcpd-relay: spooled}.
 */
public final class IngestAnswer implements Processor {

    static final String NATIVE_BODY = "{\"accepted\":0,\"duplicate\":0,\"rejected\":0}";
    static final String OTLP_JSON_BODY = "{\"partialSuccess\":{}}";

    @Override
    public void process(Exchange exchange) {
        var request = VertxExchange.request(exchange);
        Message answer = exchange.getMessage();
        answer.removeHeaders("*");
        answer.setHeader("mcpd-relay", "spooled");
        if (IngestPaths.isOtlp(IngestTargetCheck.of(exchange).path())) {
            otlpPartialSuccess(answer, request.getHeader("Content-Type"));
        } else {
            answer.setHeader(Exchange.HTTP_RESPONSE_CODE, 202);
            answer.setHeader(Exchange.CONTENT_TYPE, "application/json");
            answer.setBody(AnswerBody.text(NATIVE_BODY));
        }
    }

    /**
     * The answer an OpenTelemetry exporter expects: 200 with an empty partial-success response, JSON when the request
     * was JSON, else protobuf (an empty {@code Export*ServiceResponse}: all its fields absent, zero bytes).
     */
    public static void otlpPartialSuccess(Message answer, String requestContentType) {
        answer.setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        if (isJson(requestContentType)) {
            answer.setHeader(Exchange.CONTENT_TYPE, "application/json");
            answer.setBody(AnswerBody.text(OTLP_JSON_BODY));
        } else {
            answer.setHeader(Exchange.CONTENT_TYPE, "application/x-protobuf");
            answer.setBody(AnswerBody.of(new byte[0]));
        }
    }

    private static boolean isJson(String contentType) {
        return contentType != null && contentType.toLowerCase().startsWith("application/json");
    }
}
