package dev.mcpd.collector;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.ingest.IdempotencyKey;
import dev.mcpd.ingest.IngestPaths;
import dev.mcpd.ingest.IngestRefusal;
import dev.mcpd.ingest.VertxExchange;
import io.vertx.core.http.HttpServerRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Reads what a request brings into a {@link Batch} (SPEC §9). An OTLP request is kept as received and counts as one
 * event; a native batch ({@code {"idempotency_key"?: string, "events": [...]}}) is parsed to count its events —
 * JSON objects are accepted, anything else rejected — and its key in the body beats the {@code Idempotency-Key}
 * header. Malformed JSON is a 400 with a one-line reason. A gzip native body is decompressed to be read (at most
 * {@value #INFLATION_LIMIT} times {@code --max-body-bytes}) but stored as received.
 */
public final class BatchReader implements Processor {

    /** Exchange property holding the {@link Batch}. */
    public static final String BATCH = "mcpd.batch";
    static final int INFLATION_LIMIT = 8;

    /** Strict: content after the batch object, or a field given twice, is malformed — not silently ignored. */
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private final long maxBodyBytes;

    public BatchReader(long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public void process(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        byte[] body = exchange.getIn().getBody(byte[].class);
        String contentType = orEmpty(request.getHeader("Content-Type"));
        String contentEncoding = orEmpty(request.getHeader("Content-Encoding"));
        Optional<String> headerKey = Optional.ofNullable(request.getHeader(IdempotencyKey.HEADER)).map(key -> {
            if (!IdempotencyKey.isValidSenderKey(key)) {
                throw IngestRefusal.badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters");
            }
            return key;
        });
        long received = exchange.getClock().getCreated();
        Batch batch;
        if (IngestPaths.isOtlp(request.path())) {
            batch = new Batch(headerKey, request.uri(), contentType, contentEncoding, received, 1, 0, body);
        } else {
            JsonNode root = parse(decoded(body, contentEncoding));
            JsonNode events = root.get("events");
            if (events == null || !events.isArray()) {
                throw IngestRefusal.badRequest("a native batch is {\"idempotency_key\"?: string, \"events\": [...]}:"
                        + " \"events\" must be an array");
            }
            int accepted = 0;
            for (JsonNode event : events) {
                if (event.isObject()) {
                    accepted++;
                }
            }
            Optional<String> key = bodyKey(root).or(() -> headerKey);
            batch = new Batch(key, request.uri(), contentType, contentEncoding, received, accepted,
                    events.size() - accepted, body);
        }
        exchange.setProperty(BATCH, batch);
    }

    private static Optional<String> bodyKey(JsonNode root) {
        JsonNode key = root.get("idempotency_key");
        if (key == null || key.isNull()) {
            return Optional.empty();
        }
        if (!key.isTextual() || !IdempotencyKey.isValidSenderKey(key.asText())) {
            throw IngestRefusal.badRequest("idempotency_key must be a string of 1 to 255 visible ASCII characters");
        }
        return Optional.of(key.asText());
    }

    private static JsonNode parse(byte[] json) {
        try {
            JsonNode root = JSON.readTree(json);
            if (root == null || !root.isObject()) {
                throw IngestRefusal.badRequest("a native batch must be a JSON object");
            }
            return root;
        } catch (JsonProcessingException e) {
            String what = e.getOriginalMessage().lines().findFirst().orElse("");
            int detail = what.indexOf(" (");
            throw IngestRefusal.badRequest("malformed JSON at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ": " + (detail > 0 ? what.substring(0, detail) : what));
        } catch (IOException e) {
            throw IngestRefusal.badRequest("unreadable body: " + e.getMessage());
        }
    }

    private byte[] decoded(byte[] body, String contentEncoding) {
        if (contentEncoding.isEmpty() || contentEncoding.equalsIgnoreCase("identity")) {
            return body;
        }
        if (!contentEncoding.equalsIgnoreCase("gzip")) {
            throw IngestRefusal.unsupportedEncoding("Content-Encoding " + contentEncoding
                    + " is not supported for /v1/ingest: use gzip or none");
        }
        long limit = maxBodyBytes * INFLATION_LIMIT;
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            byte[] inflated = in.readNBytes((int) Math.min(limit + 1, Integer.MAX_VALUE - 8));
            if (inflated.length > limit) {
                throw IngestRefusal.tooLarge(limit);
            }
            return inflated;
        } catch (IOException e) {
            throw IngestRefusal.badRequest("the gzip body cannot be decompressed: " + e.getMessage());
        }
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
