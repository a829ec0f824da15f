package dev.mcpd.collector;

import dev.mcpd.http.AnswerBody;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.Otlp;
import dev.mcpd.http.VertxExchange;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * The collector's answer (SPEC §9): a native batch gets 200 {@code {"accepted":A,"duplicate":D,"rejected":R}}; an
 * OTLP request gets the partial-success response of its content type.
 */
public final class CollectorAnswer implements Processor {

    @Override
    public void process(Exchange exchange) {
        var request = VertxExchange.request(exchange);
        Archived archived = exchange.getProperty(ArchiveStep.ARCHIVED, Archived.class);
        Message answer = exchange.getMessage();
        answer.removeHeaders("*");
        if (Otlp.isExportPath(IngestTargetCheck.of(exchange).path())) {
            Otlp.partialSuccess(answer, request.getHeader("Content-Type"));
            return;
        }
        answer.setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        answer.setHeader(Exchange.CONTENT_TYPE, "application/json");
        answer.setBody(AnswerBody.text("{\"accepted\":" + archived.accepted() + ",\"duplicate\":" + archived.duplicate()
                + ",\"rejected\":" + archived.rejected() + "}"));
    }
}
