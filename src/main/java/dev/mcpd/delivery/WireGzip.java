package dev.mcpd.delivery;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;

/**
 * Compression of what the relay itself puts together — a relay batch, a merged OTLP request — for the link. Worth it
 * only when it saves at least a tenth: below that, the upstream's cost of inflating outweighs the bytes saved.
 */
public final class WireGzip {

    private WireGzip() {
    }

    /** {@code body} gzip-compressed, when that saves at least a tenth of it. */
    public static Optional<byte[]> ifItSavesATenth(byte[] body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(body.length / 2 + 64);
        try (GZIPOutputStream zip = new GZIPOutputStream(bytes, 64 * 1024)) {
            zip.write(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.size() <= body.length * 9L / 10 ? Optional.of(bytes.toByteArray()) : Optional.empty();
    }
}
