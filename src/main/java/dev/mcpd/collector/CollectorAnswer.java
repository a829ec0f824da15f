package dev.mcpd.collector;

import dev.mcpd.http.Answers;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.OtlpAnswer;
import dev.mcpd.store.Archived;
import dev.mcpd.wire.Otlp;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The collector's answer: a native batch gets 200 {@code {"accepted":A,"duplicate":D,"rejected":R}}; an
 * OTLP request gets the partial-success response of its content type.
 */
public final class CollectorAnswer implements Processor {

    @Override
    public void process(Exchange exchange) {
        Archived archived = exchange.getProperty(ArchiveStep.ARCHIVED, Archived.class);
        if (Otlp.isExportPath(IngestTargetCheck.of(exchange).path())) {
            OtlpAnswer.partialSuccess(exchange);
            return;
        }
        Answers.write(exchange.getMessage(), 200, Answers.JSON, Answers.text("{\"accepted\":" + archived.accepted()
                + ",\"duplicate\":" + archived.duplicate() + ",\"rejected\":" + archived.rejected() + "}"));
    }
}
