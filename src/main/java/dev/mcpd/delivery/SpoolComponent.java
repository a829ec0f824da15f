package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import java.util.Map;
import org.apache.camel.Endpoint;
import org.apache.camel.support.DefaultComponent;

/**
 * {@code spool:NAME?workers=N} — a Camel consumer of the relay's spool: N workers each take the oldest entry not yet
 * out and run it through the route. It is what lets the delivery route start with {@code from: spool:relay}.
 */
public final class SpoolComponent extends DefaultComponent {

    private final Spool spool;
    private final Lanes lanes;

    /**
     * What the delivery lanes share.
     *
     * @param workers      counts the busy ones; its total is what the endpoint's {@code workers} option must be
     * @param budget       the body bytes entries out for delivery may hold at once
     * @param maxBodyBytes the largest entry there can be ({@code --max-body-bytes})
     * @param board        the upstreams: whether the first ready one takes batches
     * @param packer       how entries are packed into batches
     * @param attempts     each entry's failed attempts, forgotten when it leaves the spool
     */
    public record Lanes(DeliveryWorkers workers, DeliveryBudget budget, long maxBodyBytes, UpstreamBoard board,
                        ShipmentPacker packer, EntryAttempts attempts) {
    }

    public SpoolComponent(Spool spool, Lanes lanes) {
        this.spool = spool;
        this.lanes = lanes;
    }

    @Override
    protected Endpoint createEndpoint(String uri, String remaining, Map<String, Object> parameters) throws Exception {
        int count = getAndRemoveParameter(parameters, "workers", Integer.class, lanes.workers().total());
        if (count < 1) {
            throw new IllegalArgumentException("spool endpoint " + uri + ": workers must be at least 1");
        }
        return new SpoolEndpoint(uri, this, spool, count, lanes);
    }
}
