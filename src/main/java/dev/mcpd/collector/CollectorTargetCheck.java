package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.Otlp;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/** The collector takes {@code /v1/ingest} and the OTLP paths; any other POST path is a 404. */
public final class CollectorTargetCheck implements Processor {

    @Override
    public void process(Exchange exchange) {
        String path = IngestTargetCheck.of(exchange).path();
        if (!path.equals("/v1/ingest") && !Otlp.isExportPath(path)) {
            throw IngestRefusal.notFound("not an ingest path: the collector takes /v1/ingest and OTLP /v1/traces,"
                    + " /v1/logs, /v1/metrics");
        }
    }
}
