package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import org.apache.camel.Consumer;
import org.apache.camel.Processor;
import org.apache.camel.Producer;
import org.apache.camel.support.DefaultEndpoint;

/**
 * The spool as a Camel endpoint, both ways, as camel-file's is: the ingest route writes to it ({@code to: spool:relay},
 * with the write step the relay gives the component), the delivery route consumes from it ({@code from: spool:relay}).
 */
public final class SpoolEndpoint extends DefaultEndpoint {

    private final Spool spool;
    private final int workers;
    private final SpoolComponent.Lanes lanes;

    SpoolEndpoint(String uri, SpoolComponent component, Spool spool, int workers, SpoolComponent.Lanes lanes) {
        super(uri, component);
        this.spool = spool;
        this.workers = workers;
        this.lanes = lanes;
    }

    @Override
    public Producer createProducer() {
        return new SpoolProducer(this, ((SpoolComponent) getComponent()).writer());
    }

    @Override
    public Consumer createConsumer(Processor processor) throws Exception {
        SpoolConsumer consumer = new SpoolConsumer(this, processor, spool, workers, lanes);
        configureConsumer(consumer);
        return consumer;
    }
}
