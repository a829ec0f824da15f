package dev.mcpd.collector;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.http.Answers;
import dev.mcpd.store.Archived;
import dev.mcpd.store.ReadEntry;
import java.util.List;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The answer to a relay batch: 200 with every entry's own outcome, in order —
 * {@code {"entries":[{"status":200,"accepted":A,"duplicate":D,"rejected":R}, {"status":400,"reason":"…"}, …]}}.
 */
public final class RelayBatchAnswer implements Processor {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    @SuppressWarnings("unchecked")
    public void process(Exchange exchange) throws Exception {
        List<ReadEntry> entries = exchange.getProperty(RelayBatchReader.ENTRIES, List.class);
        ObjectNode answer = JSON.createObjectNode();
        ArrayNode outcomes = answer.putArray("entries");
        for (ReadEntry entry : entries) {
            ObjectNode outcome = outcomes.addObject();
            if (entry.archived().isPresent()) {
                Archived archived = entry.archived().get();
                outcome.put("status", 200).put("accepted", archived.accepted()).put("duplicate", archived.duplicate())
                        .put("rejected", archived.rejected());
            } else {
                outcome.put("status", entry.refusedStatus()).put("reason", entry.refusedReason());
            }
        }
        Answers.write(exchange.getMessage(), 200, Answers.JSON, Answers.of(JSON.writeValueAsBytes(answer)));
    }
}
