package dev.mcpd.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPOutputStream;

/** A native batch of empty objects, gzip-compressed: a few tens of KiB that inflate to as much as is asked for. */
public final class GzipBomb {

    /** Objects per block the batch is written in: "{}," 65 536 times, 192 KiB. */
    public static final int OBJECTS_PER_BLOCK = 1 << 16;

    private GzipBomb() {
    }

    /**
     * {@code {"events":[{},{},…,{}]}}: blocks of {@value #OBJECTS_PER_BLOCK} objects until at least {@code inflated}
     * bytes, then one more object.
     */
    public static byte[] ofEmptyObjects(long inflated) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
            out.write("{\"events\":[".getBytes(StandardCharsets.UTF_8));
            byte[] block = "{},".repeat(OBJECTS_PER_BLOCK).getBytes(StandardCharsets.UTF_8);
            for (long written = 0; written < inflated; written += block.length) {
                out.write(block);
            }
            out.write("{}]}".getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
