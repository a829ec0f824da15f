package dev.mcpd.delivery;

import dev.mcpd.config.Streams;
import dev.mcpd.spool.ForwardedHeader;
import dev.mcpd.spool.SpoolRequest;
import io.airlift.compress.snappy.SnappyCompressor;
import io.airlift.compress.snappy.SnappyDecompressor;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Prometheus remote write 1.0 requests of one stream merged into one, so that an ordered stream keeps its pace across
 * a long round trip: each body's snappy block decoded, the {@code WriteRequest} messages concatenated in the order
 * received (their repeated {@code timeseries} and {@code metadata} append), and the whole encoded again. A part is
 * taken only when its message is well formed at the top level — nothing but length-delimited fields 1 and 3, each
 * within the message — so that no entry's bytes can change how another's are read.
 *
 * <p>Snappy is aircompressor's (the raw block format Prometheus uses): pure Java — no native library to unpack into a
 * temporary directory, which snappy-java needs — kept by the Trino project, and checked against a real Prometheus
 * receiver by the tests. (Netty's raw encoder, already on the class path, fails on inputs past 32 KiB.) Remote write
 * 2.0 ({@code proto=io.prometheus.write.v2.Request}) carries a table of strings per request and cannot be merged by
 * concatenation: such entries travel alone, in order.
 */
final class RemoteWriteMerge {

    /** What one entry brings to a merge: its {@code WriteRequest}, decoded. */
    record Part(byte[] bytes) implements MergePart {
    }

    static final String ENCODING = "snappy";
    private static final int TIMESERIES = 1;
    private static final int METADATA = 3;

    private RemoteWriteMerge() {
    }

    /**
     * The decoded request of a remote-write 1.0 entry that may join a merge: a POST of {@code application/x-protobuf}
     * (no other {@code proto=}), snappy-encoded, with {@code X-Prometheus-Remote-Write-Version: 0.1.x} among its
     * forwarded headers, at most {@code maxBytes} decoded, well formed. Empty otherwise: it travels alone.
     */
    static Optional<Part> partOf(SpoolRequest request, long maxBytes) {
        if (!request.method().equals("POST") || !request.contentEncoding().equalsIgnoreCase(ENCODING)
                || !version1(request) || !protobufWriteRequest(request.contentType())) {
            return Optional.empty();
        }
        return decoded(request.body(), maxBytes).filter(RemoteWriteMerge::wellFormed).map(Part::new);
    }

    private static boolean version1(SpoolRequest request) {
        for (ForwardedHeader header : request.forwarded()) {
            if (header.name().equalsIgnoreCase(Streams.REMOTE_WRITE_VERSION)) {
                return header.value().strip().startsWith("0.1");
            }
        }
        return false;
    }

    private static boolean protobufWriteRequest(String contentType) {
        String[] parts = contentType.toLowerCase(Locale.ROOT).split(";");
        if (!parts[0].strip().equals("application/x-protobuf")) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            String parameter = parts[i].strip();
            if (parameter.startsWith("proto=") && !parameter.equals("proto=prometheus.writerequest")) {
                return false;
            }
        }
        return true;
    }

    /** One snappy-encoded {@code WriteRequest} of the parts' messages, in order. */
    static byte[] merged(List<Part> parts) {
        ByteArrayOutputStream joined = new ByteArrayOutputStream(parts.stream().mapToInt(p -> p.bytes().length).sum());
        parts.forEach(part -> joined.writeBytes(part.bytes()));
        return encoded(joined.toByteArray());
    }

    static byte[] encoded(byte[] plain) {
        SnappyCompressor compressor = new SnappyCompressor();
        byte[] out = new byte[compressor.maxCompressedLength(plain.length)];
        int length = compressor.compress(plain, 0, plain.length, out, 0, out.length);
        return Arrays.copyOf(out, length);
    }

    /** The snappy block decoded, unless it is not one or says it is larger than {@code maxBytes}. */
    static Optional<byte[]> decoded(byte[] block, long maxBytes) {
        try {
            int length = SnappyDecompressor.getUncompressedLength(block, 0);
            if (length < 0 || length > maxBytes) {
                return Optional.empty(); // checked before a byte is inflated: a small block may claim a huge one
            }
            byte[] out = new byte[length];
            int written = new SnappyDecompressor().decompress(block, 0, block.length, out, 0, length);
            return written == length ? Optional.of(out) : Optional.empty();
        } catch (RuntimeException notSnappy) { // MalformedInputException, or a length that runs past the block
            return Optional.empty();
        }
    }

    /** Nothing but length-delimited {@code timeseries} and {@code metadata} fields, each within the message. */
    static boolean wellFormed(byte[] message) {
        int at = 0;
        while (at < message.length) {
            long[] tag = ProtobufWire.varint(message, at);
            if (tag == null) {
                return false;
            }
            int field = (int) (tag[0] >>> 3);
            if ((field != TIMESERIES && field != METADATA) || (tag[0] & 7) != ProtobufWire.LENGTH_DELIMITED) {
                return false;
            }
            long[] length = ProtobufWire.varint(message, (int) tag[1]);
            if (length == null || length[0] < 0 || length[0] > message.length - length[1]) {
                return false;
            }
            at = (int) (length[1] + length[0]);
        }
        return true;
    }
}
