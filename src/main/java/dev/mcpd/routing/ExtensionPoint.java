package dev.mcpd.routing;

import java.util.List;
import java.util.function.Supplier;
import org.apache.camel.AsyncCallback;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.Producer;
import org.apache.camel.component.direct.DirectEndpoint;
import org.apache.camel.support.AsyncProcessorSupport;

/**
 * A call to an extension point for operators' routes ({@code direct:mcpd-before-spool}, …): nothing at all when no
 * route consumes it; otherwise the exchange goes through that route on a worker thread, since an operator's step may
 * block (write a file, call a service), and the flow resumes where it was once the route is done. A failure in the
 * operator's route fails the exchange, as a step of the flow would.
 */
public final class ExtensionPoint extends AsyncProcessorSupport {

    private final String uri;
    private volatile DirectEndpoint endpoint;
    private volatile Producer producer;

    /** {@code name}: the extension point's {@code direct:} name, such as {@code mcpd-before-spool}. */
    public ExtensionPoint(String name) {
        this.uri = "direct:" + name + "?block=false&failIfNoConsumers=false";
    }

    /** The endpoint and its producer, made at the first call (the Camel context is the exchange's). */
    private DirectEndpoint endpoint(CamelContext camel) throws Exception {
        if (endpoint == null) {
            synchronized (this) {
                if (endpoint == null) {
                    DirectEndpoint made = camel.getEndpoint(uri, DirectEndpoint.class);
                    producer = made.createProducer();
                    producer.start();
                    endpoint = made;
                }
            }
        }
        return endpoint;
    }

    @Override
    protected void doStop() throws Exception {
        if (producer != null) {
            producer.stop();
        }
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        return each(exchange, callback, () -> List.of(exchange));
    }

    /**
     * Sends the exchanges {@code calls} makes, one after the other, through the operator's route, on a worker thread
     * (it may block); the first that fails fails {@code exchange}. Without a route consuming the extension point,
     * {@code calls} is not even asked.
     */
    public boolean each(Exchange exchange, AsyncCallback callback, Supplier<List<Exchange>> calls) {
        try {
            if (endpoint(exchange.getContext()).getConsumer() == null) {
                callback.done(true);
                return true;
            }
        } catch (Exception e) {
            exchange.setException(e);
            callback.done(true);
            return true;
        }
        List<Exchange> each = calls.get();
        if (each.isEmpty()) {
            callback.done(true);
            return true;
        }
        return Resume.blocking(exchange, callback, () -> {
            for (Exchange one : each) {
                producer.process(one);
                if (one.getException() != null) {
                    throw one.getException();
                }
            }
        });
    }
}
