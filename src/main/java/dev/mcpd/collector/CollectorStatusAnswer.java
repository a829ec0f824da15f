package dev.mcpd.collector;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.http.Answers;
import dev.mcpd.store.StoreLease;
import java.time.Instant;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * {@code GET /collector/status}: this replica's id, the lease as it last read it, and its last sweep:
 * {@code {"replica":"ID","lease":{"name":"upkeep","held":true,"holder":"ID","since":"…"},"lastSweep":{…}|null}}.
 */
public final class CollectorStatusAnswer implements Processor {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final UpkeepPass upkeep;

    public CollectorStatusAnswer(UpkeepPass upkeep) {
        this.upkeep = upkeep;
    }

    @Override
    public void process(Exchange exchange) {
        Answers.write(exchange.getMessage(), 200, Answers.JSON, Answers.text(json()));
    }

    String json() {
        ObjectNode status = JSON.createObjectNode();
        status.put("replica", upkeep.replica());
        StoreLease.State state = upkeep.state();
        ObjectNode lease = status.putObject("lease");
        lease.put("name", upkeep.leaseName());
        lease.put("held", state.held());
        state.holder().ifPresentOrElse(holder -> lease.put("holder", holder), () -> lease.putNull("holder"));
        state.sinceMillis().ifPresentOrElse(since -> lease.put("since", Instant.ofEpochMilli(since).toString()),
                () -> lease.putNull("since"));
        upkeep.lastSweep().ifPresentOrElse(sweep -> {
            ObjectNode last = status.putObject("lastSweep");
            last.put("at", sweep.at().toString());
            last.put("keysForgotten", sweep.keysForgotten());
            last.put("batchesDeleted", sweep.batchesDeleted());
            last.put("tookMillis", sweep.tookMillis());
        }, () -> status.putNull("lastSweep"));
        return status.toString();
    }
}
