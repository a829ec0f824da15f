package dev.mcpd.ingest;

import dev.mcpd.config.Streams;
import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.wire.FieldContent;
import io.vertx.core.http.HttpServerRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * What a request's stream is made of, read before its body: the sender's values of the headers named by
 * {@code --forward-header}, kept with the entry and sent with it upstream, and whether it came with
 * {@code X-Prometheus-Remote-Write-Version} (then it is ordered whatever its path; which paths are ordered is decided
 * when it is delivered, by the {@code --ordered-path} of that run). A kept value must be valid field content and
 * small (1 KiB each, 4 KiB together): one that is not is refused with 400 before anything is kept — acknowledged, it
 * could not be sent upstream as received, or would grow every entry without bound. A header sent several times is
 * kept as one value, its values joined with {@code ", "} as HTTP allows.
 */
public final class StreamHeaders implements Processor {

    private final Streams streams;

    public StreamHeaders(Streams streams) {
        this.streams = streams;
    }

    @Override
    public void process(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        List<ForwardedHeader> kept = new ArrayList<>(0);
        int total = 0;
        for (String name : streams.forwardHeaders()) {
            List<String> values = request.headers().getAll(name);
            if (values.isEmpty()) {
                continue;
            }
            String value = String.join(", ", values);
            if (!FieldContent.isValid(value)) {
                throw refused("the " + name + " header holds a control character (CR, LF, NUL, …): not a valid"
                        + " header value");
            }
            int bytes = value.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > Streams.MAX_VALUE_BYTES) {
                throw refused("the " + name + " header is longer than " + Streams.MAX_VALUE_BYTES + " bytes: it is"
                        + " kept with the entry and sent upstream, and kept values are bounded");
            }
            total += name.length() + bytes;
            if (total > Streams.MAX_TOTAL_BYTES) {
                throw refused("the forwarded headers (" + String.join(", ", streams.forwardHeaders()) + ") hold more"
                        + " than " + Streams.MAX_TOTAL_BYTES + " bytes together");
            }
            kept.add(new ForwardedHeader(name, value));
        }
        IngestExchange.setStream(exchange, kept, request.headers().contains(Streams.REMOTE_WRITE_VERSION));
    }

    private static IngestRefusal refused(String reason) {
        return IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_FRAMING, reason);
    }
}
