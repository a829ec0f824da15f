package dev.mcpd.endpoint;

import dev.mcpd.delivery.SpoolConsumer;
import org.apache.camel.Consumer;
import org.apache.camel.Processor;
import org.apache.camel.Producer;
import org.apache.camel.support.DefaultEndpoint;

/** One {@code spool:NAME?workers=N} URI: its producer writes messages, its consumer runs N delivery lanes. */
public final class SpoolEndpoint extends DefaultEndpoint {

    private final int workers;

    SpoolEndpoint(String uri, SpoolComponent component, int workers) {
        super(uri, component);
        this.workers = workers;
    }

    @Override
    public SpoolComponent getComponent() {
        return (SpoolComponent) super.getComponent();
    }

    @Override
    public Producer createProducer() {
        SpoolComponent component = getComponent();
        return new SpoolProducer(this, component.spool(), component.fates(), component.maxBodyBytes());
    }

    @Override
    public Consumer createConsumer(Processor processor) throws Exception {
        SpoolComponent component = getComponent();
        SpoolConsumer consumer = new SpoolConsumer(this, processor, component.spool(), workers, component.lanes());
        configureConsumer(consumer);
        return consumer;
    }
}
