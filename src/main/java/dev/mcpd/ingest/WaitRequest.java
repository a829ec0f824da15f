package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.wire.WaitDuration;
import java.time.Duration;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Reads {@code mcpd-relay-wait: DURATION} before anything is written: a sender that sends it is answered
 * only once its entry was delivered or dead-lettered, or its time is up. A malformed value is a 400 and nothing is
 * written.
 */
public final class WaitRequest implements Processor {

    public static final String HEADER = "mcpd-relay-wait";

    @Override
    public void process(Exchange exchange) {
        String value = VertxExchange.request(exchange).getHeader(HEADER);
        if (value == null) {
            return;
        }
        Duration wait;
        try {
            wait = WaitDuration.parse(HEADER, value);
        } catch (IllegalArgumentException e) {
            throw IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_WAIT, e.getMessage());
        }
        IngestExchange.setWait(exchange, wait);
    }
}
