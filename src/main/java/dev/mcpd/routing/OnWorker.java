package dev.mcpd.routing;

import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.support.AsyncProcessorSupport;

/**
 * A step that blocks — a store's transaction, the parse of a large body — in a route that runs on the event loop: it
 * runs on one of Vert.x's worker threads, and the route resumes on its event loop once it is done (off an event loop,
 * it simply runs). The route's YAML names the step as usual; the bean is bound wrapped.
 */
public final class OnWorker extends AsyncProcessorSupport {

    private final Processor step;

    private OnWorker(Processor step) {
        this.step = step;
    }

    public static OnWorker of(Processor step) {
        return new OnWorker(step);
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        return Resume.blocking(exchange, callback, () -> step.process(exchange));
    }

    @Override
    public String toString() {
        return "on a worker: " + step;
    }
}
