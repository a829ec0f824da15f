package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import org.apache.camel.Consumer;
import org.apache.camel.Processor;
import org.apache.camel.Producer;
import org.apache.camel.support.DefaultEndpoint;

/** The spool as a Camel endpoint: consume-only (requests enter the spool through the ingest route). */
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
        throw new UnsupportedOperationException("the spool is written by the ingest route, not by a producer");
    }

    @Override
    public Consumer createConsumer(Processor processor) throws Exception {
        SpoolConsumer consumer = new SpoolConsumer(this, processor, spool, workers, lanes);
        configureConsumer(consumer);
        return consumer;
    }
}
