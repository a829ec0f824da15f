package dev.mcpd.delivery;

import org.apache.camel.AsyncCallback;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Exchange;
import org.apache.camel.support.DefaultAsyncProducer;

/**
 * {@code to: spool:relay}: writes the request on the exchange to the spool, and the route goes on once it is durable.
 * The writing is the relay's write step's (it knows the request: target, key, credential); this only carries it, so
 * the route says where the request goes as the delivery route says where it comes from.
 */
final class SpoolProducer extends DefaultAsyncProducer {

    private final AsyncProcessor writer;

    SpoolProducer(SpoolEndpoint endpoint, AsyncProcessor writer) {
        super(endpoint);
        this.writer = writer;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        return writer.process(exchange, callback);
    }
}
