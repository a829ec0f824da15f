package dev.mcpd.ingest;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.wire.RelayBatch;
import java.util.Locale;
import java.util.regex.Pattern;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * The relay takes any POST path but one: relay batches ({@link RelayBatch#PATH}) are a transport between mcpd
 * processes, which a relay builds itself when it delivers. One a sender posted would be spooled and delivered
 * verbatim, and the collector's per-entry answers to it (its refusals among them) would vanish behind the relay's
 * 200; so it is refused here with a 404, before anything is read or written.
 *
 * <p>The relay forwards a target under the upstream's own path prefix, and a proxy in front of a collector may strip
 * one of its own: so a path that <em>ends</em> in {@code /v1/relay-batches} is refused too ({@code /tenant/v1/relay-batches}),
 * as is one with a trailing slash, repeated slashes or another letter case, and a query never matters.
 */
public final class RelayTargetCheck implements Processor {

    static final String REASON = "not an ingest path: /v1/relay-batches is taken from mcpd relays only, and a relay"
            + " builds relay batches itself; send each request to its own path";

    private static final String RELAY_BATCHES = "relay-batches";
    private static final Pattern REPEATED_SLASHES = Pattern.compile("/{2,}");

    @Override
    public void process(Exchange exchange) {
        if (isRelayBatchPath(IngestTargetCheck.of(exchange).path())) {
            throw IngestRefusal.notFound(REASON);
        }
    }

    /** Whether {@code path} (normalised: {@link dev.mcpd.wire.RequestTarget}) names a collector's relay batches. */
    static boolean isRelayBatchPath(String path) {
        // Every ingest request passes here: most paths are told apart by one scan, without a regex or a copy.
        if (!containsIgnoringCase(path, RELAY_BATCHES)) {
            return false;
        }
        String collapsed = REPEATED_SLASHES.matcher(path).replaceAll("/");
        while (collapsed.length() > 1 && collapsed.endsWith("/")) {
            collapsed = collapsed.substring(0, collapsed.length() - 1);
        }
        return collapsed.toLowerCase(Locale.ROOT).endsWith(RelayBatch.PATH);
    }

    private static boolean containsIgnoringCase(String text, String part) {
        for (int i = 0; i + part.length() <= text.length(); i++) {
            if (text.regionMatches(true, i, part, 0, part.length())) {
                return true;
            }
        }
        return false;
    }
}
