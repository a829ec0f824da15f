package dev.mcpd.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * The framing in which a relay sends several spooled requests to an mcpd collector in one HTTP request, version 1
 * ({@code docs/relay-batch.md}): the magic {@code MRB1}, the number of entries, then per entry a JSON header (method,
 * target, content type, content encoding, idempotency key, receive time, and the forwarded headers when it has any)
 * and the body bytes exactly as received, each
 * preceded by its length (4 bytes, big-endian). The whole framing may travel gzip-compressed
 * ({@code Content-Encoding: gzip}); the relay compresses it when that saves at least a tenth.
 */
public final class RelayBatch {

    /** The media type; its version is part of it, so a change of framing is a new type. */
    public static final String CONTENT_TYPE = "application/vnd.mcpd.relay-batch.v1";
    /** Where an mcpd collector takes relay batches. */
    public static final String PATH = "/v1/relay-batches";
    /** The token an mcpd collector's probe answer names in {@code Mcpd-Capabilities}. */
    public static final String CAPABILITY = "relay-batch/1";
    static final byte[] MAGIC = "MRB1".getBytes(StandardCharsets.US_ASCII);
    /** More entries than this in one batch is not a relay's batch. */
    public static final int MAX_ENTRIES = 65_536;
    static final int MAX_HEADER_BYTES = 64 * 1024;
    /** What the framing adds to the bodies, at most, that a collector allows beyond its body limit. */
    public static final long FRAMING_ALLOWANCE = (long) MAX_ENTRIES * 16 + 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();
    /** {@link Entry#heldMillis()} of an entry whose batch did not say how long the relay held it. */
    public static final long NOT_SAID = -1;

    /**
     * One spooled request inside a batch; {@code headers} are the sender's headers the relay forwards with it
     * ({@code --forward-header}), in order, none for most entries.
     */
    public record Entry(String method, String target, String contentType, String contentEncoding,
                        String idempotencyKey, long receivedAtMillis, byte[] body, Map<String, String> headers,
                        long heldMillis) {

        public Entry {
            headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        }

        /** An entry as a relay spools it: how long it was held is said when it is sent. */
        public Entry(String method, String target, String contentType, String contentEncoding,
                     String idempotencyKey, long receivedAtMillis, byte[] body, Map<String, String> headers) {
            this(method, target, contentType, contentEncoding, idempotencyKey, receivedAtMillis, body, headers,
                    NOT_SAID);
        }

        /** An entry with no forwarded header. */
        public Entry(String method, String target, String contentType, String contentEncoding,
                     String idempotencyKey, long receivedAtMillis, byte[] body) {
            this(method, target, contentType, contentEncoding, idempotencyKey, receivedAtMillis, body, Map.of());
        }
    }

    /** The framing could not be read: the whole batch is a 400 with this one-line reason. */
    public static final class Malformed extends Exception {
        Malformed(String reason) {
            super(reason, null, false, false);
        }
    }

    /** What a body of this many bytes reads as past the limit. */
    public static final class TooLarge extends Exception {
        TooLarge(String reason) {
            super(reason, null, false, false);
        }
    }

    private RelayBatch() {
    }

    /** The framing of {@code entries}, sent now. */
    public static byte[] encode(List<Entry> entries) {
        return encode(entries, System.currentTimeMillis());
    }

    /**
     * The framing of {@code entries}, not compressed, sent at {@code nowMillis} by the relay's clock: each entry says
     * how long the relay has held it ({@code heldMillis}), which the collector subtracts from its own clock — a
     * relay's clock may be days off, the time it held an entry is not.
     */
    public static byte[] encode(List<Entry> entries, long nowMillis) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(entries.stream().mapToInt(e -> e.body().length + 256)
                .sum() + 8);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeInt(entries.size());
            for (Entry entry : entries) {
                ObjectNode header = JSON.createObjectNode()
                        .put("method", entry.method())
                        .put("target", entry.target())
                        .put("contentType", entry.contentType())
                        .put("contentEncoding", entry.contentEncoding())
                        .put("idempotencyKey", entry.idempotencyKey())
                        .put("receivedAtMillis", entry.receivedAtMillis());
                if (entry.receivedAtMillis() > 0) {
                    header.put("heldMillis", Math.max(0, nowMillis - entry.receivedAtMillis()));
                }
                if (!entry.headers().isEmpty()) {
                    ObjectNode forwarded = header.putObject("headers");
                    entry.headers().forEach(forwarded::put);
                }
                byte[] headerBytes = JSON.writeValueAsBytes(header);
                out.writeInt(headerBytes.length);
                out.write(headerBytes);
                out.writeInt(entry.body().length);
                out.write(entry.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * The entries of a received batch.
     *
     * @param contentEncoding "" or {@code gzip}; the inflated framing may not pass {@code maxFramingBytes}
     * @throws Malformed when it is not version-1 framing, or is cut short
     * @throws TooLarge  when the framing inflates past its limit
     */
    public static List<Entry> decode(byte[] body, String contentEncoding, long maxFramingBytes)
            throws Malformed, TooLarge {
        InputStream raw;
        if (contentEncoding.isEmpty() || contentEncoding.equalsIgnoreCase("identity")) {
            raw = new BoundedInputStream(new ByteArrayInputStream(body), maxFramingBytes);
        } else if (contentEncoding.equalsIgnoreCase("gzip")) {
            try {
                raw = new BoundedInputStream(new GZIPInputStream(new ByteArrayInputStream(body)), maxFramingBytes);
            } catch (IOException e) {
                throw new Malformed("the batch is not gzip");
            }
        } else {
            throw new Malformed("a relay batch is sent as is or gzip-compressed");
        }
        try (DataInputStream in = new DataInputStream(raw)) {
            byte[] magic = in.readNBytes(MAGIC.length);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new Malformed("not a version-1 relay batch");
            }
            int count = in.readInt();
            if (count < 0 || count > MAX_ENTRIES) {
                throw new Malformed("a relay batch holds 0 to " + MAX_ENTRIES + " entries");
            }
            List<Entry> entries = new ArrayList<>(Math.min(count, 1024));
            for (int i = 0; i < count; i++) {
                int headerLength = in.readInt();
                if (headerLength < 0 || headerLength > MAX_HEADER_BYTES) {
                    throw new Malformed("entry " + i + ": a header of " + headerLength + " bytes");
                }
                JsonNode header = JSON.readTree(in.readNBytes(headerLength));
                int bodyLength = in.readInt();
                if (bodyLength < 0) {
                    throw new Malformed("entry " + i + ": a body of " + bodyLength + " bytes");
                }
                byte[] entryBody = in.readNBytes(bodyLength);
                if (entryBody.length != bodyLength) {
                    throw new EOFException();
                }
                Map<String, String> forwarded = new LinkedHashMap<>();
                header.path("headers").fields().forEachRemaining(field -> {
                    if (field.getValue().isTextual()) {
                        forwarded.put(field.getKey(), field.getValue().asText());
                    }
                });
                entries.add(new Entry(text(header, "method", i), text(header, "target", i),
                        text(header, "contentType", i), text(header, "contentEncoding", i),
                        text(header, "idempotencyKey", i), header.path("receivedAtMillis").asLong(0), entryBody,
                        forwarded, held(header)));
            }
            if (in.read() != -1) {
                throw new Malformed("bytes after the last entry of the relay batch");
            }
            return entries;
        } catch (BoundedInputStream.Exceeded e) {
            throw new TooLarge("the relay batch inflates past " + maxFramingBytes + " bytes");
        } catch (JsonProcessingException e) {
            throw new Malformed("an entry's header is not JSON");
        } catch (EOFException e) {
            throw new Malformed("the relay batch ends in the middle of an entry");
        } catch (IOException e) {
            throw new Malformed("the relay batch could not be read: " + e.getClass().getSimpleName());
        }
    }

    /** {@code heldMillis} when the header says it as a number of zero or more, else {@link #NOT_SAID}. */
    private static long held(JsonNode header) {
        JsonNode held = header.path("heldMillis");
        return held.canConvertToLong() && held.isIntegralNumber() && held.asLong() >= 0 ? held.asLong() : NOT_SAID;
    }

    private static String text(JsonNode header, String field, int index) throws Malformed {
        JsonNode value = header.get(field);
        if (value == null || !value.isTextual()) {
            throw new Malformed("entry " + index + ": its header has no \"" + field + "\"");
        }
        return value.asText();
    }
}
