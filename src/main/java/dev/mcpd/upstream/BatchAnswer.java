package dev.mcpd.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * An mcpd collector's answer to a relay batch: every entry's own status, in order, and for a refused one its reason
 * — {@code {"entries":[{"status":200,…}, {"status":400,"reason":"…"}]}}.
 */
public record BatchAnswer(List<EntryOutcome> entries) {

    /** One entry's outcome: archived (2xx), or refused with a status and a one-line reason; {@code node} as answered. */
    public record EntryOutcome(int status, String reason, JsonNode node) {

        /**
         * The rest of its object ({@code {"accepted":A,"duplicate":D,"rejected":R}}): what the collector answers for
         * it alone. Made only when a sender waits for it ({@code mcpd-relay-wait}), never for every delivered entry.
         */
        public byte[] counts() {
            ObjectNode counts = node.isObject() ? ((ObjectNode) node).deepCopy() : JSON.createObjectNode();
            counts.remove(List.of("status", "reason"));
            try {
                return JSON.writeValueAsBytes(counts);
            } catch (IOException e) {
                throw new IllegalStateException("a parsed JSON object is written back", e);
            }
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    /** A reason kept beside a dead letter is one line; a collector's is short, a longer one is cut. */
    private static final int MAX_REASON_CHARS = 300;

    /** The outcomes of a batch of {@code size} entries; empty when the answer is not one (then the batch is retried). */
    public static Optional<BatchAnswer> parse(byte[] answer, int size) {
        JsonNode root;
        try {
            root = JSON.readTree(answer);
        } catch (IOException e) {
            return Optional.empty();
        }
        JsonNode entries = root == null ? null : root.get("entries");
        if (entries == null || !entries.isArray() || entries.size() != size) {
            return Optional.empty();
        }
        List<EntryOutcome> outcomes = new ArrayList<>(size);
        for (JsonNode entry : entries) {
            int status = entry.path("status").asInt(0);
            if (status < 100 || status > 599) {
                return Optional.empty();
            }
            String reason = entry.path("reason").asText("");
            outcomes.add(new EntryOutcome(status, reason.length() > MAX_REASON_CHARS
                    ? reason.substring(0, MAX_REASON_CHARS) + "…" : reason, entry));
        }
        return Optional.of(new BatchAnswer(outcomes));
    }
}
