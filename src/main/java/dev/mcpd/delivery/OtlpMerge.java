package dev.mcpd.delivery;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.mcpd.spool.SpoolRequest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.zip.GZIPInputStream;

/**
 * Merges OTLP/HTTP export requests of one signal into one export request, for an upstream that takes no relay
 * batches. Protobuf messages merge by concatenation — an export request has one repeated field, and repeated fields
 * append — and JSON ones by joining their one array ({@code resourceSpans}, {@code resourceMetrics},
 * {@code resourceLogs}). JSON elements are copied byte for byte, never re-serialised, so every number and string
 * arrives as it was sent.
 */
final class OtlpMerge {

    /** An OTLP signal, by its export path and the array of a JSON export request. */
    enum Signal {
        TRACES("/v1/traces", "resourceSpans"),
        METRICS("/v1/metrics", "resourceMetrics"),
        LOGS("/v1/logs", "resourceLogs");

        final String path;
        final String field;

        Signal(String path, String field) {
            this.path = path;
            this.field = field;
        }

        /** The label of the signal in metrics: {@code traces}, {@code metrics}, {@code logs}. */
        String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The signal whose export path {@code target} is exactly (no query: a query may name another tenant). */
        static Optional<Signal> of(String target) {
            return switch (target) { // asked of every entry a lane takes: no stream, no allocation
                case "/v1/traces" -> Optional.of(TRACES);
                case "/v1/metrics" -> Optional.of(METRICS);
                case "/v1/logs" -> Optional.of(LOGS);
                default -> Optional.empty();
            };
        }

        /** The signal of a target's path, query or not. */
        static Optional<Signal> ofPath(String target) {
            int query = target.indexOf('?');
            return of(query < 0 ? target : target.substring(0, query));
        }
    }

    /** How an entry's body takes part in a merge: protobuf bytes as they are, or a JSON array's elements. */
    enum Format { PROTOBUF, JSON }

    /**
     * What one entry brings to a merge: its body decoded (gzip inflated), and for JSON just the elements of its
     * array (possibly none).
     */
    record Part(Signal signal, Format format, byte[] bytes) implements MergePart {
    }

    private static final JsonFactory JSON = new JsonFactory();

    private OtlpMerge() {
    }

    /**
     * The part {@code request} brings to a merge, or empty when it cannot be merged: not a POST of an OTLP export
     * path, a content type that is neither protobuf nor JSON, an encoding other than identity or gzip, gzip that does
     * not inflate or inflates past {@code maxBytes}, protobuf that is not a run of whole fields, or JSON that is not
     * exactly one UTF-8 export request object.
     */
    static Optional<Part> partOf(SpoolRequest request, long maxBytes) {
        if (!request.method().equals("POST")) {
            return Optional.empty();
        }
        Optional<Signal> signal = Signal.of(request.target());
        Optional<Format> format = formatOf(request.contentType());
        if (signal.isEmpty() || format.isEmpty()) {
            return Optional.empty();
        }
        Optional<byte[]> decoded = decoded(request.body(), request.contentEncoding(), maxBytes);
        if (decoded.isEmpty()) {
            return Optional.empty();
        }
        if (format.get() == Format.PROTOBUF) {
            // Only a run of whole fields may be concatenated: one that ends inside a field (an open group) would
            // take the entries after it into that field, and the receiver would never see them.
            return decoded.filter(ProtobufWire::wholeFields)
                    .map(bytes -> new Part(signal.get(), Format.PROTOBUF, bytes));
        }
        return jsonElements(decoded.get(), signal.get().field)
                .map(elements -> new Part(signal.get(), Format.JSON, elements));
    }

    static Optional<Format> formatOf(String contentType) {
        String media = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        return switch (media) {
            case "application/x-protobuf", "application/protobuf" -> Optional.of(Format.PROTOBUF);
            case "application/json" -> Optional.of(Format.JSON);
            default -> Optional.empty();
        };
    }

    /** One export request of the parts, all of one signal and format. */
    static byte[] merged(List<Part> parts) {
        Part first = parts.get(0);
        ByteArrayOutputStream out = new ByteArrayOutputStream(parts.stream().mapToInt(p -> p.bytes().length).sum()
                + 32);
        if (first.format() == Format.PROTOBUF) {
            parts.forEach(part -> out.writeBytes(part.bytes()));
            return out.toByteArray();
        }
        out.writeBytes(("{\"" + first.signal().field + "\":[").getBytes(StandardCharsets.UTF_8));
        boolean any = false;
        for (Part part : parts) {
            if (part.bytes().length == 0) {
                continue;
            }
            if (any) {
                out.write(',');
            }
            out.writeBytes(part.bytes());
            any = true;
        }
        out.writeBytes("]}".getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    private static Optional<byte[]> decoded(byte[] body, String encoding, long maxBytes) {
        if (encoding.isEmpty() || encoding.equalsIgnoreCase("identity")) {
            return body.length <= maxBytes ? Optional.of(body) : Optional.empty();
        }
        if (!encoding.equalsIgnoreCase("gzip")) {
            return Optional.empty();
        }
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            byte[] inflated = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, maxBytes + 1));
            return inflated.length <= maxBytes ? Optional.of(inflated) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // it travels alone, and its upstream says what it thinks of it
        }
    }

    /**
     * The bytes between the brackets of {@code field}'s array in a JSON object that has that field and no other, or
     * empty when the body is anything else. Whitespace around the elements is trimmed; an empty array gives none.
     */
    static Optional<byte[]> jsonElements(byte[] body, String field) {
        try (JsonParser parser = JSON.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return Optional.empty();
            }
            byte[] elements = null;
            String name;
            while ((name = parser.nextFieldName()) != null) {
                JsonToken value = parser.nextToken();
                if (!name.equals(field) || value != JsonToken.START_ARRAY || elements != null) {
                    return Optional.empty(); // another field, or the field twice: not for a merge to judge
                }
                long open = parser.currentTokenLocation().getByteOffset();
                parser.skipChildren();
                long close = parser.currentTokenLocation().getByteOffset();
                if (open < 0 || close <= open || close > body.length) {
                    return Optional.empty(); // read as characters, not bytes (UTF-16 or UTF-32): not sliced here
                }
                elements = trimmed(body, (int) open + 1, (int) close);
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null || elements == null) {
                return Optional.empty();
            }
            return Optional.of(elements);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static byte[] trimmed(byte[] body, int from, int to) {
        while (from < to && isJsonSpace(body[from])) {
            from++;
        }
        while (to > from && isJsonSpace(body[to - 1])) {
            to--;
        }
        return Arrays.copyOfRange(body, from, to);
    }

    private static boolean isJsonSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }
}
