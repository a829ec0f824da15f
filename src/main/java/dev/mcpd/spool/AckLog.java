package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
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
 * in {@code <segment>.ack}. Group-committed: appended as deliveries finish, forced with the others every
 * {@link GroupCommitter#ACK_FLUSH_INTERVAL} — and, the first time, its name synced into the spool directory, or a power cut
 * could take the whole file and every delivery it recorded. Losing the last interval's acknowledgements in a power
 * cut only means those entries are sent again, and their idempotency keys make the copies duplicates upstream. A torn
 * last number is ignored.
 */
final class AckLog implements Closeable {

    static final String SUFFIX = ".ack";

    private final Path file;
    private FileChannel channel;
    private long size;
    private boolean dirty;
    /** Created by this run and its name not yet synced into the spool directory. */
    private boolean nameUnsynced;
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
            if (Files.exists(file)) {
                channel = FileChannel.open(file, StandardOpenOption.WRITE);
            } else {
                channel = SpoolFiles.createOwnerOnly(file);
                nameUnsynced = true;
            }
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
            if (nameUnsynced) {
                DurableDirectories.sync(file.getParent());
                nameUnsynced = false;
            }
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
