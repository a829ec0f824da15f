package dev.mcpd.http;

import java.util.Locale;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.spi.HeaderFilterStrategy;

/**
 * Which headers cross the HTTP boundary. Inbound, a sender can never set a Camel header (which would let input steer
 * the route). Outbound, only the headers an answer is meant to carry are written, so nothing a sender sent — a key, a
 * cookie — is ever echoed back.
 */
public final class AnswerHeaderPolicy implements HeaderFilterStrategy {

    private static final Set<String> ANSWER_HEADERS = Set.of("content-type", "retry-after", "mcpd-relay", "allow",
            "mcpd-capabilities", "grpc-accept-encoding", "mcpd-relay-seq", "mcpd-relay-id");

    @Override
    public boolean applyFilterToCamelHeaders(String headerName, Object headerValue, Exchange exchange) {
        return !ANSWER_HEADERS.contains(headerName.toLowerCase(Locale.ROOT));
    }

    @Override
    public boolean applyFilterToExternalHeaders(String headerName, Object headerValue, Exchange exchange) {
        String lower = headerName.toLowerCase(Locale.ROOT);
        return lower.startsWith("camel") || lower.startsWith("org.apache.camel");
    }
}
