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
    private final DeliveryWorkers busy;
    private final DeliveryBudget budget;
    private final long maxBodyBytes;

    SpoolEndpoint(String uri, SpoolComponent component, Spool spool, int workers, DeliveryWorkers busy,
                  DeliveryBudget budget, long maxBodyBytes) {
        super(uri, component);
        this.spool = spool;
        this.workers = workers;
        this.busy = busy;
        this.budget = budget;
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public Producer createProducer() {
        throw new UnsupportedOperationException("the spool is written by the ingest route, not by a producer");
    }

    @Override
    public Consumer createConsumer(Processor processor) throws Exception {
        SpoolConsumer consumer = new SpoolConsumer(this, processor, spool, workers, busy, budget, maxBodyBytes);
        configureConsumer(consumer);
        return consumer;
    }
}
