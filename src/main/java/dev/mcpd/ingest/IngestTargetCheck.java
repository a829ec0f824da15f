package dev.mcpd.ingest;

import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/** Any POST is ingest, except on the paths that belong to the process itself (probes, metrics, /relay/…): 405. */
public final class IngestTargetCheck implements Processor {

    @Override
    public void process(Exchange exchange) {
        String path = VertxExchange.request(exchange).path();
        if (IngestPaths.isReserved(path)) {
            VertxExchange.response(exchange).putHeader("Allow", "GET");
            throw IngestRefusal.notAllowed(path + " is not an ingest path; it answers GET");
        }
    }
}
