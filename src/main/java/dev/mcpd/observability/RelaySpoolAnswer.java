package dev.mcpd.observability;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.delivery.FailedAttempts;
import dev.mcpd.http.Answers;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.spool.Spool;
import java.io.IOException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * {@code GET /relay/spool?limit=N}: the entries of the spool that failed to be delivered since the relay started,
 * oldest first — each with seq, receivedAt, ageSeconds, method, target, bytes, attempts, lastFailure and
 * lastFailureAt, the fields {@code mcpd relay spool list} shows — and how many wait in all. An entry not listed has no
 * failed attempt (yet). Read from memory only, so it answers on the event loop. Every character outside ASCII is
 * written as a JSON escape: a target is sender text, and this answer is read in terminals too.
 */
public final class RelaySpoolAnswer implements Processor {

    public static final String PATH = "/relay/spool";
    static final int DEFAULT_LIMIT = 20;
    /** A larger answer would only be slow to read: the records are the entries delivery holds, rarely this many. */
    static final int MAX_LIMIT = 10_000;

    private static final ObjectMapper JSON = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private final Spool spool;
    private final FailedAttempts attempts;
    private final InstantSource clock;

    public RelaySpoolAnswer(Spool spool, FailedAttempts attempts, InstantSource clock) {
        this.spool = spool;
        this.attempts = attempts;
        this.clock = clock;
    }

    @Override
    public void process(Exchange exchange) throws IOException {
        List<String> limits = VertxExchange.request(exchange).params().getAll("limit");
        int limit;
        try {
            limit = limits.isEmpty() ? DEFAULT_LIMIT : limit(limits);
        } catch (IllegalArgumentException e) {
            Answers.line(exchange.getMessage(), 400, e.getMessage());
            return;
        }
        Answers.write(exchange.getMessage(), 200, Answers.JSON,
                Answers.of(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(snapshot(limit))));
    }

    private static int limit(List<String> given) {
        String text = given.get(0);
        if (given.size() > 1 || !text.matches("[0-9]{1,6}") || Integer.parseInt(text) < 1
                || Integer.parseInt(text) > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be given once, a whole number from 1 to " + MAX_LIMIT);
        }
        return Integer.parseInt(text);
    }

    ObjectNode snapshot(int limit) {
        long now = clock.millis();
        ObjectNode root = JSON.createObjectNode();
        root.put("relay", spool.id());
        root.put("directory", spool.directory().toString());
        root.put("waiting", spool.entries());
        root.put("recorded", attempts.recorded());
        ArrayNode entries = root.putArray("entries");
        for (FailedAttempts.Entry record : attempts.oldest(limit)) {
            ObjectNode entry = entries.addObject();
            entry.put("seq", record.seq());
            entry.put("receivedAt", Instant.ofEpochMilli(record.receivedAtMillis()).toString());
            entry.put("ageSeconds", Math.max(0, now - record.receivedAtMillis()) / 1000);
            entry.put("method", record.method());
            entry.put("target", record.target());
            entry.put("bytes", record.bodyBytes());
            entry.put("attempts", record.attempts());
            entry.put("lastFailure", record.lastFailure());
            entry.put("lastFailureAt", record.lastFailureAt().toString());
        }
        return root;
    }
}
