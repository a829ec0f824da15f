package dev.mcpd.http;

import dev.mcpd.config.Secret;
import io.vertx.core.http.HttpServerRequest;
import java.util.Optional;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Checks {@code --ingest-key} before anything of the request is read or written: the sender presents
 * {@code Authorization: Bearer KEY} or {@code x-mcpd-key: KEY}; anything else is a 401. Without a configured key the
 * port is open.
 */
public final class SenderKeyCheck implements Processor {

    /**
     * Exchange property: the header whose key matched. Only that one is passed on upstream: a sender that
     * sends a right {@code x-mcpd-key} and a wrong {@code Authorization} has the wrong one dropped, not forwarded.
     */
    private static final String VERIFIED_HEADER = "mcpd.verifiedCredentialHeader";

    private final Optional<Secret> ingestKey;

    public SenderKeyCheck(Optional<Secret> ingestKey) {
        this.ingestKey = ingestKey;
    }

    @Override
    public void process(Exchange exchange) {
        if (ingestKey.isEmpty()) {
            return;
        }
        String verified = verifiedHeader(VertxExchange.request(exchange));
        if (verified == null) {
            throw IngestRefusal.unauthorized();
        }
        exchange.setProperty(VERIFIED_HEADER, verified);
    }

    /** The header whose key this step verified on the exchange, or null (no ingest key is configured). */
    public static String verifiedBy(Exchange exchange) {
        return exchange.getProperty(VERIFIED_HEADER, String.class);
    }

    /** Whether the request may be served: it presents the key, or no key is configured. */
    public boolean admits(HttpServerRequest request) {
        return ingestKey.isEmpty() || verifiedHeader(request) != null;
    }

    /** The header whose value is the configured key ({@code Authorization} or {@code x-mcpd-key}), or null. */
    private String verifiedHeader(HttpServerRequest request) {
        Secret key = ingestKey.orElseThrow();
        String bearer = bearerToken(request.getHeader("Authorization"));
        String header = request.getHeader("x-mcpd-key");
        // Both are compared (in constant time) whatever the first gives, so timing tells nothing.
        boolean bearerMatches = bearer != null && key.matches(bearer);
        boolean headerMatches = header != null && key.matches(header);
        if (!(bearerMatches || headerMatches)) {
            return null;
        }
        return bearerMatches ? "Authorization" : "x-mcpd-key";
    }

    private static String bearerToken(String authorization) {
        if (authorization == null || authorization.length() < 7
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        return authorization.substring(7).trim();
    }
}
