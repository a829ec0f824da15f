package dev.mcpd.delivery;

import dev.mcpd.spool.Spool;
import dev.mcpd.upstream.UpstreamBoard;
import java.util.Map;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Endpoint;
import org.apache.camel.support.DefaultComponent;

/**
 * {@code spool:NAME?workers=N} — the relay's spool as a Camel endpoint. Consumed, N workers each take the oldest entry
 * not yet out and run it through the route ({@code from: spool:relay}); produced to, it writes the request durably
 * ({@code to: spool:relay}, the ingest route).
 */
public final class SpoolComponent extends DefaultComponent {

    private final Spool spool;
    private final Lanes lanes;
    private final AsyncProcessor writer;

    /**
     * What the delivery lanes share.
     *
     * @param workers      counts the busy ones, and how many lanes run: the endpoint's {@code workers} option, by
     *                     default {@code --workers}
     * @param budget       the body bytes entries out for delivery may hold at once
     * @param board        the upstreams: whether the first ready one takes batches
     * @param packer       how entries are packed into batches
     * @param records      what delivery remembers of each entry out, forgotten when it leaves the spool
     * @param streams      what waits for its ordered stream's turn
     * @param expiry       {@code --spool-max-age}: an entry that waited for an upstream past it goes to dead/
     */
    public record Lanes(DeliveryWorkers workers, DeliveryBudget budget, UpstreamBoard board,
                        ShipmentPacker packer, EntryRecords records, OrderedStreams streams, SpoolExpiry expiry) {
    }

    /**
     * @param writer how a request is written: durably, the route going on once it is (ingest's write step, which
     *               knows the request; the spool endpoint's producer runs it)
     */
    public SpoolComponent(Spool spool, Lanes lanes, AsyncProcessor writer) {
        this.spool = spool;
        this.lanes = lanes;
        this.writer = writer;
    }

    AsyncProcessor writer() {
        return writer;
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
