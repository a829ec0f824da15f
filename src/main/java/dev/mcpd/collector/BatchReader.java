package dev.mcpd.collector;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.IngestTargetCheck;
import dev.mcpd.http.RequestFormat;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.store.Batch;
import dev.mcpd.wire.BoundedInputStream;
import dev.mcpd.wire.Otlp;
import dev.mcpd.wire.RequestTarget;
import dev.mcpd.wire.SenderIdempotencyKey;
import io.vertx.core.http.HttpServerRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Reads what a request brings into a {@link Batch}. An OTLP request is kept as received and counts as one
 * event; a native batch ({@code {"idempotency_key"?: string, "events": [...]}}) is read to count its events — JSON
 * objects are accepted, anything else rejected — and its key in the body beats the {@code Idempotency-Key} header.
 * The body is stored as received.
 *
 * <p>A native batch is read as a stream of tokens, never as a tree, so what parsing holds in memory does not grow
 * with the body: a megabyte of {@code {}} costs a counter, not a million objects. A gzip body is decompressed as it
 * is read, and refused with 413 the moment it passes {@code --max-body-bytes} decompressed. Strict: content after the
 * batch object, or a field given twice, is malformed. Jackson's read limits are set here, not left to its defaults:
 * nesting at most {@value #MAX_NESTING_DEPTH} deep, numbers of at most {@value #MAX_NUMBER_LENGTH} characters, field
 * names of at most {@value #MAX_NAME_LENGTH}; strings and the document are bounded by {@code --max-body-bytes}.
 * Anything malformed or past a limit is a 400 with a one-line reason.
 */
public final class BatchReader implements Processor {

    /** Exchange property holding the {@link Batch}. */
    public static final String BATCH = "mcpd.batch";
    static final int MAX_NESTING_DEPTH = 128;
    static final int MAX_NUMBER_LENGTH = 256;
    static final int MAX_NAME_LENGTH = 4096;
    /** How much of Jackson's description of a syntax error the sender is told. */
    private static final int MAX_DETAIL_CHARS = 120;

    private final long maxBodyBytes;
    private final JsonFactory json;

    public BatchReader(long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
        this.json = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_NESTING_DEPTH)
                        .maxNumberLength(MAX_NUMBER_LENGTH)
                        .maxNameLength(MAX_NAME_LENGTH)
                        .maxStringLength((int) Math.min(maxBodyBytes, Integer.MAX_VALUE))
                        .maxDocumentLength(maxBodyBytes)
                        .build())
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
    }

    @Override
    public void process(Exchange exchange) {
        HttpServerRequest request = VertxExchange.request(exchange);
        byte[] body = exchange.getIn().getBody(byte[].class);
        RequestFormat format = RequestFormat.of(exchange);
        exchange.setProperty(BATCH, read(IngestTargetCheck.of(exchange), format.contentType(),
                format.contentEncoding(),
                Optional.ofNullable(request.getHeader(SenderIdempotencyKey.HEADER)),
                exchange.getClock().getCreated(), body));
    }

    /**
     * One request as the collector archives it: a native batch counted (400 if malformed), an OTLP export as received.
     * Also used for each entry of a relay batch.
     *
     * @param headerKey the {@code Idempotency-Key} it came with, unchecked
     * @throws IngestRefusal saying what is wrong with it
     */
    Batch read(RequestTarget target, String contentType, String contentEncoding, Optional<String> headerKey,
               long receivedAtMillis, byte[] body) {
        refuseControlCharacters("Content-Type", contentType);
        refuseControlCharacters("Content-Encoding", contentEncoding);
        Optional<String> key = headerKey.map(k -> {
            if (!SenderIdempotencyKey.isValid(k)) {
                throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_IDEMPOTENCY_KEY, SenderIdempotencyKey.RULE);
            }
            return k;
        });
        if (Otlp.isExportPath(target.path())) {
            return new Batch(key, target.text(), contentType, contentEncoding, receivedAtMillis, 1, 0, body);
        }
        Counted counted = count(body, contentEncoding);
        return new Batch(counted.key().or(() -> key), target.text(), contentType, contentEncoding, receivedAtMillis,
                counted.accepted(), counted.rejected(), body);
    }

    /**
     * HTTP never brings a control character in a header, but a relay batch's entry or a Kafka record's headers may:
     * a store keeps text, and PostgreSQL refuses a NUL in it for good — the request would be read again for ever.
     */
    private static void refuseControlCharacters(String header, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 && c != '\t' || c == 0x7f) {
                throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_BODY, header + " holds a control character");
            }
        }
    }

    /** What a native batch says: its own key, if any, and its events, accepted (objects) and rejected (the rest). */
    private record Counted(Optional<String> key, int accepted, int rejected) {
    }

    private Counted count(byte[] body, String contentEncoding) {
        try (InputStream in = decoded(body, contentEncoding); JsonParser parser = json.createParser(in)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw malformed("a native batch must be a JSON object");
            }
            Optional<String> key = Optional.empty();
            boolean sawEvents = false;
            int accepted = 0;
            int rejected = 0;
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String field = parser.currentName();
                JsonToken value = parser.nextToken();
                if (field.equals("idempotency_key")) {
                    key = keyOf(parser, value);
                } else if (field.equals("events")) {
                    if (value != JsonToken.START_ARRAY) {
                        throw eventsNotAnArray();
                    }
                    sawEvents = true;
                    for (JsonToken event = parser.nextToken(); event != JsonToken.END_ARRAY;
                            event = parser.nextToken()) {
                        if (event == JsonToken.START_OBJECT) {
                            accepted++;
                        } else {
                            rejected++;
                        }
                        parser.skipChildren();
                    }
                } else {
                    parser.skipChildren();
                }
            }
            if (parser.nextToken() != null) {
                throw malformed("malformed JSON: content after the batch object");
            }
            if (!sawEvents) {
                throw eventsNotAnArray();
            }
            return new Counted(key, accepted, rejected);
        } catch (BoundedInputStream.Exceeded e) {
            throw IngestRefusal.tooLargeDecompressed(maxBodyBytes);
        } catch (StreamConstraintsException e) {
            throw malformed("the batch passes a JSON read limit: " + withoutJacksonHint(e.getOriginalMessage()));
        } catch (JsonProcessingException e) {
            throw malformed("malformed JSON" + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr()
                    + ", column " + e.getLocation().getColumnNr()) + ": " + detail(e.getOriginalMessage()));
        } catch (IOException e) {
            throw malformed(contentEncoding.isEmpty() ? "unreadable body" : "the gzip body cannot be decompressed");
        }
    }

    private static Optional<String> keyOf(JsonParser parser, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return Optional.empty();
        }
        if (value != JsonToken.VALUE_STRING || !SenderIdempotencyKey.isValid(parser.getText())) {
            throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_IDEMPOTENCY_KEY,
                    "idempotency_key must be a string of 1 to 255 visible ASCII characters");
        }
        return Optional.of(parser.getText());
    }

    private InputStream decoded(byte[] body, String contentEncoding) throws IOException {
        if (contentEncoding.isEmpty() || contentEncoding.equalsIgnoreCase("identity")) {
            return new ByteArrayInputStream(body);
        }
        if (!contentEncoding.equalsIgnoreCase("gzip")) {
            throw IngestRefusal.unsupportedEncoding("this Content-Encoding is not supported for /v1/ingest: use gzip"
                    + " or none");
        }
        return new BoundedInputStream(new GZIPInputStream(new ByteArrayInputStream(body)), maxBodyBytes);
    }

    private static IngestRefusal eventsNotAnArray() {
        return malformed("a native batch is {\"idempotency_key\"?: string, \"events\": [...]}: \"events\" must be an"
                + " array");
    }

    private static IngestRefusal malformed(String reason) {
        return IngestRefusal.badRequest(IngestRefusal.Kind.MALFORMED_BATCH, reason);
    }

    /** The first line of Jackson's description, without its parenthesised hints, cut short. */
    private static String detail(String message) {
        String what = message == null ? "" : message.lines().findFirst().orElse("");
        int hint = what.indexOf(" (");
        what = hint > 0 ? what.substring(0, hint) : what;
        return what.length() > MAX_DETAIL_CHARS ? what.substring(0, MAX_DETAIL_CHARS) + "…" : what;
    }

    /** "… exceeds the maximum allowed (128, from `StreamReadConstraints.getMaxNestingDepth()`)" → "… (128)". */
    private static String withoutJacksonHint(String message) {
        String line = message == null ? "" : message.lines().findFirst().orElse("");
        return line.replaceAll(", from `[^`]*`\\)", ")").replaceAll(" \\(from `[^`]*`\\)", "");
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
