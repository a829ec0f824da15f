package dev.mcpd.endpoint;

import dev.mcpd.delivery.SpoolLanes;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import java.util.Map;
import org.apache.camel.Endpoint;
import org.apache.camel.support.DefaultComponent;

/**
 * {@code spool:NAME?workers=N} — the relay's spool as a Camel endpoint, both ways, as camel-file's directory is.
 * Produced to ({@code to: spool:relay}), it writes the message durably and the route goes on once it is
 * ({@link SpoolProducer}); consumed ({@code from: spool:relay}), N delivery lanes each take the oldest entry not yet
 * out and run it through the route.
 */
public final class SpoolComponent extends DefaultComponent {

    private final Spool spool;
    private final EntryFates fates;
    private final long maxBodyBytes;
    private final SpoolLanes lanes;

    /**
     * @param fates        where the fate of an entry whose sender waits for it is registered, before delivery can
     *                     take it
     * @param maxBodyBytes {@code --max-body-bytes}: the largest body a message may bring
     */
    public SpoolComponent(Spool spool, EntryFates fates, long maxBodyBytes, SpoolLanes lanes) {
        this.spool = spool;
        this.fates = fates;
        this.maxBodyBytes = maxBodyBytes;
        this.lanes = lanes;
    }

    @Override
    protected Endpoint createEndpoint(String uri, String remaining, Map<String, Object> parameters) throws Exception {
        int count = getAndRemoveParameter(parameters, "workers", Integer.class, lanes.workers().total());
        if (count < 1) {
            throw new IllegalArgumentException("spool endpoint " + uri + ": workers must be at least 1");
        }
        return new SpoolEndpoint(uri, this, count);
    }

    Spool spool() {
        return spool;
    }

    EntryFates fates() {
        return fates;
    }

    long maxBodyBytes() {
        return maxBodyBytes;
    }

    SpoolLanes lanes() {
        return lanes;
    }
}
