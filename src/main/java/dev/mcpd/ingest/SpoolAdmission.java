package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.spool.Spool;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Backpressure before the body is read: when the spool cannot take a request of the declared size, it is
 * refused at once with 503 and {@code Retry-After: 5}, so the sender holds it and retries. This early check saves
 * reading a body that could not be kept; the spool's append checks the bound again, atomically, and has the last word.
 */
public final class SpoolAdmission implements Processor {

    private final Spool spool;

    public SpoolAdmission(Spool spool) {
        this.spool = spool;
    }

    @Override
    public void process(Exchange exchange) {
        String declared = VertxExchange.request(exchange).getHeader("Content-Length");
        long bodyBytes = 0;
        if (declared != null) {
            try {
                bodyBytes = Long.parseLong(declared.trim());
            } catch (NumberFormatException e) {
                return; // the body reader answers a bad Content-Length
            }
        }
        if (!spool.admits(bodyBytes)) {
            throw IngestRefusal.spoolFull(true);
        }
    }
}
