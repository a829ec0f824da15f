package dev.mcpd.spool;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.function.LongToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sequence numbers of a segment's entries that are done (delivered or dead-lettered), one big-endian u64 each,
 * in {@code <segment>.ack}. Forced lazily: losing an acknowledgement in a power cut only means that entry is sent
 * again, and its idempotency key makes the second copy a duplicate upstream. A torn last number is ignored.
 */
final class AckLog implements Closeable {

    static final String SUFFIX = ".ack";

    private final Path file;
    private FileChannel channel;
    private long size;
    private boolean dirty;
    private boolean warned;

    private static final Logger LOG = LoggerFactory.getLogger(AckLog.class);

    AckLog(Path dir, long segmentFirstSeq) {
        this.file = dir.resolve(SpoolFiles.baseName(segmentFirstSeq) + SUFFIX);
    }

    Path file() {
        return file;
    }

    /** Marks in {@code done} the entries this log acknowledges; {@code indexOf} maps a seq to its index or -1. */
    void readInto(BitSet done, LongToIntFunction indexOf) throws IOException {
        if (!Files.exists(file)) {
            return;
        }
        byte[] all = Files.readAllBytes(file);
        ByteBuffer buffer = ByteBuffer.wrap(all);
        while (buffer.remaining() >= Long.BYTES) {
            int index = indexOf.applyAsInt(buffer.getLong());
            if (index >= 0) {
                done.set(index);
            }
        }
        size = all.length - (all.length % Long.BYTES);
    }

    /**
     * Appends the first {@code count} of {@code seqs}; a failure is logged (once per log file) and otherwise ignored,
     * see {@link SegmentIndex}.
     */
    void appendOrWarn(long[] seqs, int count) {
        try {
            append(seqs, count);
        } catch (IOException e) {
            if (!warned) {
                warned = true;
                LOG.warn("acknowledgements in {} cannot be written ({}); entries delivered from this segment go out once"
                        + " more after a restart", file, e.toString());
            }
        }
    }

    /** Appends the first {@code count} of {@code seqs}, all with one write: a batch delivered is one system call. */
    void append(long[] seqs, int count) throws IOException {
        if (count == 0) {
            return;
        }
        if (channel == null) {
            channel = Files.exists(file)
                    ? FileChannel.open(file, StandardOpenOption.WRITE)
                    : SpoolFiles.createOwnerOnly(file);
        }
        ByteBuffer records = ByteBuffer.allocate(count * Long.BYTES);
        for (int i = 0; i < count; i++) {
            records.putLong(seqs[i]);
        }
        records.flip();
        while (records.hasRemaining()) {
            size += channel.write(records, size);
        }
        dirty = true;
    }

    void forceIfDirty() throws IOException {
        if (dirty && channel != null) {
            channel.force(false);
            dirty = false;
        }
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }
}
