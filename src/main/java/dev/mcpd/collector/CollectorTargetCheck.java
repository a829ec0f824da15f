package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.wire.Otlp;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The collector takes {@code /v1/ingest}, the OTLP paths and relay batches ({@code /v1/relay-batches}); any other POST
 * path is a 404.
 */
public final class CollectorTargetCheck implements Processor {

    @Override
    public void process(Exchange exchange) {
        RequestTarget target = IngestTargetCheck.of(exchange);
        if (!target.path().equals(RelayBatch.PATH)) {
            check(target);
        }
    }

    /** Refuses a target the collector does not ingest at (404), a relay batch's entry included. */
    static void check(RequestTarget target) {
        String path = target.path();
        if (!path.equals("/v1/ingest") && !Otlp.isExportPath(path)) {
            throw IngestRefusal.notFound("not an ingest path: the collector takes /v1/ingest and OTLP /v1/traces,"
                    + " /v1/logs, /v1/metrics");
        }
    }
}
