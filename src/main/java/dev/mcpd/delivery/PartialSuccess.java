package dev.mcpd.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the rejected count of an upstream's 2xx answer: an OTLP partial success (protobuf field 1 of the
 * {@code Export*ServiceResponse}: rejected count in its field 1, message in its field 2; or JSON
 * {@code {"partialSuccess":{"rejectedSpans":…,"errorMessage":…}}}) or a native answer's {@code rejected}.
 */
public record PartialSuccess(long rejected, String message) {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The rejected items an answer reports; empty when it reports none or cannot be read. */
    public static Optional<PartialSuccess> of(String contentType, byte[] answer) {
        if (answer == null || answer.length == 0) {
            return Optional.empty();
        }
        try {
            PartialSuccess found = contentType != null && contentType.toLowerCase(Locale.ROOT).contains("protobuf")
                    ? fromProtobuf(ByteBuffer.wrap(answer))
                    : fromJson(JSON.readTree(answer));
            return found != null && found.rejected > 0 ? Optional.of(found) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static PartialSuccess fromJson(JsonNode root) {
        if (root == null || !root.isObject()) {
            return null;
        }
        JsonNode partial = root.get("partialSuccess");
        if (partial != null && partial.isObject()) {
            long rejected = 0;
            for (Iterator<Map.Entry<String, JsonNode>> it = partial.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                if (field.getKey().startsWith("rejected")) {
                    rejected = field.getValue().asLong();
                }
            }
            return new PartialSuccess(rejected, partial.path("errorMessage").asText(""));
        }
        return new PartialSuccess(root.path("rejected").asLong(0), "");
    }

    private static PartialSuccess fromProtobuf(ByteBuffer message) {
        while (message.hasRemaining()) {
            long key = varint(message);
            int field = (int) (key >>> 3);
            int wireType = (int) (key & 7);
            if (field == 1 && wireType == 2) {
                ByteBuffer partial = lengthDelimited(message);
                long rejected = 0;
                String text = "";
                while (partial.hasRemaining()) {
                    long innerKey = varint(partial);
                    int innerField = (int) (innerKey >>> 3);
                    int innerType = (int) (innerKey & 7);
                    if (innerField == 1 && innerType == 0) {
                        rejected = varint(partial);
                    } else if (innerField == 2 && innerType == 2) {
                        ByteBuffer bytes = lengthDelimited(partial);
                        text = StandardCharsets.UTF_8.decode(bytes).toString();
                    } else {
                        skip(partial, innerType);
                    }
                }
                return new PartialSuccess(rejected, text);
            }
            skip(message, wireType);
        }
        return null;
    }

    private static long varint(ByteBuffer buffer) {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = buffer.get();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new IllegalArgumentException("varint too long");
    }

    private static ByteBuffer lengthDelimited(ByteBuffer buffer) {
        int length = (int) varint(buffer);
        ByteBuffer slice = buffer.slice(buffer.position(), length);
        buffer.position(buffer.position() + length);
        return slice;
    }

    private static void skip(ByteBuffer buffer, int wireType) {
        switch (wireType) {
            case 0 -> varint(buffer);
            case 1 -> buffer.position(buffer.position() + 8);
            case 2 -> lengthDelimited(buffer);
            case 5 -> buffer.position(buffer.position() + 4);
            default -> throw new IllegalArgumentException("wire type " + wireType);
        }
    }
}
