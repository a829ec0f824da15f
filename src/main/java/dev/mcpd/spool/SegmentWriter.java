package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The segment the spool appends to. Only the committer thread touches it.
 *
 * <p>A batch is appended and then forced with one {@code fdatasync} of each file written; until {@link #commit}
 * returns, nothing of the batch counts. If writing or forcing fails, the files are cut back to where the batch began
 * so that no half-written record sits before later ones.
 */
final class SegmentWriter implements Closeable {

    /** The most one write call takes (see {@link #writeAll}). */
    static final int WRITE_SLICE_BYTES = 1 << 20;

    private final Path dir;
    private final long firstSeq;
    private final FileChannel data;
    /** The file the segment's name pointed to when it was opened: still there after each commit, or nothing counts. */
    private final Object dataFileKey;
    private Object credentialsFileKey;
    private FileChannel credentials;
    private long dataSize;
    private long credentialsSize;
    private boolean broken;
    private final Map<Credential, Integer> credentialRefs = new HashMap<>();

    private final WriteChannels channels;

    private SegmentWriter(Path dir, long firstSeq, FileChannel data, WriteChannels channels) throws IOException {
        this.dir = dir;
        this.firstSeq = firstSeq;
        this.channels = channels;
        this.data = channels.wrap(SpoolFiles.segment(dir, firstSeq), data);
        this.dataFileKey = fileKey(SpoolFiles.segment(dir, firstSeq));
    }

    /** Creates the segment file and makes its name durable before any entry is written to it. */
    static SegmentWriter create(Path dir, long firstSeq, WriteChannels channels) throws IOException {
        FileChannel data = SpoolFiles.createOwnerOnly(SpoolFiles.segment(dir, firstSeq));
        try {
            DurableDirectories.sync(dir);
            return new SegmentWriter(dir, firstSeq, data, channels);
        } catch (IOException e) {
            data.close();
            throw e;
        }
    }

    /**
     * Like {@link #create}, but when the segment file exists already — a segment that holds no whole entry, left by
     * the previous run — it is emptied and reused, so its name (the sequence high-water mark) is never absent from
     * the directory. Its bytes, if any, were a torn batch that was never answered.
     */
    static SegmentWriter createOrReuseEmpty(Path dir, long firstSeq, WriteChannels channels) throws IOException {
        Path file = SpoolFiles.segment(dir, firstSeq);
        if (!Files.exists(file)) {
            return create(dir, firstSeq, channels);
        }
        FileChannel data = FileChannel.open(file, StandardOpenOption.WRITE,
                StandardOpenOption.READ);
        try {
            data.truncate(0);
            data.force(true);
            Files.deleteIfExists(SpoolFiles.credentials(dir, firstSeq));
            DurableDirectories.sync(dir);
            return new SegmentWriter(dir, firstSeq, data, channels);
        } catch (IOException e) {
            data.close();
            throw e;
        }
    }

    long firstSeq() {
        return firstSeq;
    }

    long size() {
        return dataSize;
    }

    /**
     * True after a failed batch could not be cut back, or once the segment is no longer reachable: it takes no more
     * entries.
     */
    boolean broken() {
        return broken;
    }

    /**
     * Appends the requests as entries {@code firstSeqOfBatch}, {@code firstSeqOfBatch + 1}, … and forces them to disk.
     * Returns only when every byte of the batch (and of any credential it introduced) is durable.
     */
    List<EntryLocation> commit(long firstSeqOfBatch, List<SpoolRequest> batch) throws IOException {
        long dataStart = dataSize;
        long credentialsStart = credentialsSize;
        List<Credential> introduced = new ArrayList<>();
        try {
            List<ByteBuffer> credentialRecords = new ArrayList<>();
            List<ByteBuffer> buffers = new ArrayList<>(batch.size() * 3);
            List<EntryLocation> written = new ArrayList<>(batch.size());
            long offset = dataSize;
            for (int i = 0; i < batch.size(); i++) {
                SpoolRequest request = batch.get(i);
                int ref = 0;
                if (request.credential().isPresent()) {
                    Credential credential = request.credential().get();
                    Integer known = credentialRefs.get(credential);
                    if (known == null) {
                        ref = credentialRefs.size() + 1;
                        credentialRefs.put(credential, ref);
                        introduced.add(credential);
                        credentialRecords.add(RecordCodec.encodeCredential(ref, credential));
                    } else {
                        ref = known;
                    }
                }
                RecordCodec.EncodedEntry encoded = RecordCodec.encodeEntry(firstSeqOfBatch + i, request, ref);
                buffers.addAll(List.of(encoded.buffers()));
                written.add(new EntryLocation(firstSeqOfBatch + i, offset, encoded.size(), request.receivedAtMillis()));
                offset += encoded.size();
            }
            if (!credentialRecords.isEmpty()) {
                credentialsSize += writeAll(credentialsChannel(), credentialsSize, credentialRecords);
                credentials.force(false);
            }
            dataSize += writeAll(data, dataSize, buffers);
            data.force(false);
            ensureReachable();
            return written;
        } catch (IOException | RuntimeException e) {
            introduced.forEach(credentialRefs::remove);
            cutBack(dataStart, credentialsStart, e);
            throw e;
        }
    }

    private FileChannel credentialsChannel() throws IOException {
        if (credentials == null) {
            credentials = channels.wrap(SpoolFiles.credentials(dir, firstSeq),
                    SpoolFiles.createOwnerOnly(SpoolFiles.credentials(dir, firstSeq)));
            DurableDirectories.sync(dir);
            credentialsFileKey = fileKey(SpoolFiles.credentials(dir, firstSeq));
        }
        return credentials;
    }

    /**
     * Fails unless what this writer writes to is what the next start will open: its files still under their names in
     * the spool directory (not deleted, not replaced — an {@code rm -rf} of the spool leaves the open files writable,
     * and every write "succeeds" into nothing), and the directory still writable (read-only mounts and, for a user
     * other than root, permissions). Once it fails the writer is broken: the spool then starts a new segment.
     */
    void ensureReachable() throws IOException {
        try {
            checkSame(SpoolFiles.segment(dir, firstSeq), dataFileKey);
            if (credentials != null) {
                checkSame(SpoolFiles.credentials(dir, firstSeq), credentialsFileKey);
            }
            if (!Files.isWritable(dir)) {
                throw new IOException("spool directory " + dir + " is not writable");
            }
        } catch (IOException e) {
            broken = true;
            throw e;
        }
    }

    private static void checkSame(Path file, Object expectedKey) throws IOException {
        Object now;
        try {
            now = fileKey(file);
        } catch (NoSuchFileException e) {
            throw new IOException(file.getFileName() + " is gone from the spool directory " + file.getParent()
                    + " (deleted, or the directory removed or replaced)", e);
        }
        if (expectedKey != null && !expectedKey.equals(now)) {
            throw new IOException(file.getFileName() + " in " + file.getParent() + " is no longer the file the"
                    + " spool writes (replaced)");
        }
    }

    private static Object fileKey(Path file) throws IOException {
        return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    }

    /**
     * Gathering writes (writev) of at most {@link #WRITE_SLICE_BYTES} each, instead of a system call per buffer.
     *
     * <p>Why in slices: the JDK copies every heap buffer of a write into a temporary direct buffer of its whole size
     * first, all of one call's buffers at once, and frees (rather than keeps) the ones over
     * {@code jdk.nio.maxCachedBufferSize}. One call for a batch of forty 16 MiB bodies would put another 640 MiB in
     * native memory for a moment; in 1 MiB slices the copy is 1 MiB at a time, and its buffers are reused.
     */
    private static long writeAll(FileChannel channel, long at, List<ByteBuffer> buffers) throws IOException {
        channel.position(at);
        long written = 0;
        List<ByteBuffer> call = new ArrayList<>();
        long callBytes = 0;
        for (ByteBuffer buffer : buffers) {
            for (int from = buffer.position(); from < buffer.limit(); ) {
                int length = (int) Math.min(buffer.limit() - from, WRITE_SLICE_BYTES - callBytes);
                call.add(buffer.slice(from, length));
                callBytes += length;
                from += length;
                if (callBytes == WRITE_SLICE_BYTES) {
                    written += writeFully(channel, call);
                    call.clear();
                    callBytes = 0;
                }
            }
        }
        return written + writeFully(channel, call);
    }

    private static long writeFully(FileChannel channel, List<ByteBuffer> slices) throws IOException {
        ByteBuffer[] array = slices.toArray(new ByteBuffer[0]);
        long total = 0;
        for (ByteBuffer slice : array) {
            total += slice.remaining();
        }
        long written = 0;
        while (written < total) {
            written += channel.write(array);
        }
        return written;
    }

    private void cutBack(long dataStart, long credentialsStart, Exception cause) {
        try {
            data.truncate(dataStart);
            dataSize = dataStart;
            if (credentials != null) {
                credentials.truncate(credentialsStart);
                credentialsSize = credentialsStart;
            }
        } catch (IOException truncateFailed) {
            cause.addSuppressed(truncateFailed);
            broken = true;
        }
    }

    @Override
    public void close() throws IOException {
        try (data) {
            if (credentials != null) {
                credentials.close();
            }
        }
    }
}
