package dev.mcpd.ingest;

import dev.mcpd.endpoint.SpoolMessage;
import dev.mcpd.http.Answers;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.OtlpAnswer;
import dev.mcpd.wire.Otlp;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * The answer to a request that is in the spool. OTLP paths get what an OpenTelemetry exporter expects:
 * 200 with an empty partial-success response, protobuf or JSON like the request. Every other path gets 202 with zero
 * counts: the true counts belong to the upstream, which has not seen the request yet. Both carry
 * {@code mcpd-relay: spooled}, and the entry's sequence number and the relay's id.
 */
public final class IngestAnswer implements Processor {

    static final String NATIVE_BODY = "{\"accepted\":0,\"duplicate\":0,\"rejected\":0}";
    /** The entry's sequence number in this relay's spool: what {@code GET /relay/sync?seq=} waits for. */
    public static final String SEQ_HEADER = "mcpd-relay-seq";
    /** This relay's identity: which relay a sequence number belongs to. */
    public static final String ID_HEADER = "mcpd-relay-id";

    private final String relayId;

    public IngestAnswer(String relayId) {
        this.relayId = relayId;
    }

    @Override
    public void process(Exchange exchange) {
        long seq = SpoolMessage.seq(exchange); // before the answer replaces the message's headers
        Message answer = Otlp.isExportPath(IngestTargetCheck.of(exchange).path())
                ? OtlpAnswer.partialSuccess(exchange)
                : Answers.write(exchange.getMessage(), 202, Answers.JSON, Answers.text(NATIVE_BODY));
        answer.setHeader("mcpd-relay", "spooled");
        answer.setHeader(SEQ_HEADER, seq);
        answer.setHeader(ID_HEADER, relayId);
    }
}
