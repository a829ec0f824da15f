package dev.mcpd.spool;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's durable spool: a small append-only storage engine with group commit. No Camel types in here.
 *
 * <h2>Guarantee</h2>
 * The future returned by {@link #append} completes only after the entry's bytes, and the directory entry of the file
 * holding them, were forced to disk ({@code fdatasync} of the segment, {@code fsync} of the directory when the
 * segment was created). A crash, {@code kill -9} or power cut after that loses nothing of the entry. Whatever a crash
 * tears (the tail of a batch being written) was never acknowledged; it is detected by its checksum and never read as
 * an entry.
 *
 * <h2>On disk</h2>
 * <pre>
 *   relay/
 *     00000000000000000001.seg    entries 1, 2, 3, … appended in sequence order       (mode 0600)
 *     00000000000000000001.cred   the distinct sender credentials those entries carry  (mode 0600, only if any)
 *     00000000000000004711.seg    the next segment, named by the first seq it may hold
 * </pre>
 * Records are framed and checksummed as {@link RecordCodec} describes. A segment takes appends until it passes
 * {@code segmentTargetBytes}; then a new one is created. At every start a new segment is created for appends and
 * the old ones are only read; its name carries the sequence high-water mark, so sequence numbers only grow even when
 * every older segment has been delivered and deleted.
 *
 * <h2>Group commit</h2>
 * One committer thread takes everything that is waiting (up to {@link #MAX_BATCH} entries), appends it with one
 * gathering write, forces it once, and only then completes the batch's futures. Under light load a batch is one entry
 * and waits for nothing; under heavy load the cost of one {@code fdatasync} is shared by the whole batch. Credentials
 * live in the segment's {@code .cred} file, written once per distinct credential and forced before the entries that
 * refer to it, so that bodies and keys never share a file.
 */
public final class Spool implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /** Entries per group commit, at most: bounds the latency one batch adds to the next. */
    static final int MAX_BATCH = 512;
    public static final long DEFAULT_SEGMENT_TARGET_BYTES = 64L * 1024 * 1024;

    private final Path dir;
    private final long segmentTargetBytes;
    private final BlockingQueue<PendingAppend> queue = new LinkedBlockingQueue<>();
    private final Thread committer;
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong commits = new AtomicLong();
    private volatile boolean closed;
    private SegmentWriter writer;
    private long nextSeq;

    private record PendingAppend(SpoolRequest request, CompletableFuture<SpoolReceipt> receipt) {
    }

    private static final PendingAppend STOP = new PendingAppend(null, null);

    private Spool(Path dir, long segmentTargetBytes) {
        this.dir = dir;
        this.segmentTargetBytes = segmentTargetBytes;
        this.committer = new Thread(this::commitLoop, "spool-committer");
    }

    public static Spool open(Path dir) throws IOException {
        return open(dir, DEFAULT_SEGMENT_TARGET_BYTES);
    }

    /** Opens (creating if needed) the spool in {@code dir}, recovering what a previous run left there. */
    public static Spool open(Path dir, long segmentTargetBytes) throws IOException {
        Spool spool = new Spool(dir, segmentTargetBytes);
        spool.recover();
        spool.committer.start();
        return spool;
    }

    private void recover() throws IOException {
        SpoolFiles.createDirectory(dir);
        long highWater = 0;
        List<Path> emptySegments = new ArrayList<>();
        for (Path segment : SegmentScan.segmentsIn(dir)) {
            SegmentScan scan = SegmentScan.of(segment);
            highWater = Math.max(highWater, scan.lastSeq());
            scan.damage().ifPresent(d -> LOG.warn("spool segment {} is torn or damaged: {}", segment.getFileName(), d));
            if (scan.entries().isEmpty()) {
                emptySegments.add(segment);
            }
            for (SegmentWriter.Written entry : scan.entries()) {
                entries.incrementAndGet();
                bytes.addAndGet(entry.size());
            }
        }
        nextSeq = highWater + 1;
        // The new segment's name records the high-water mark before the empty ones that held it go.
        writer = SegmentWriter.createOrReuseEmpty(dir, nextSeq);
        emptySegments.remove(SpoolFiles.segment(dir, nextSeq));
        for (Path empty : emptySegments) {
            Files.deleteIfExists(SpoolFiles.credentials(dir, SpoolFiles.firstSeqOf(empty)));
            Files.delete(empty);
        }
        if (!emptySegments.isEmpty()) {
            SpoolFiles.forceDirectory(dir);
        }
        LOG.info("spool at {}: {} entries, {} bytes waiting; next sequence number {}", dir, entries.get(),
                bytes.get(), nextSeq);
    }

    /**
     * Appends a request. The returned future completes with the entry's receipt once the entry is durable, or
     * exceptionally with {@link SpoolWriteException} when it could not be written (nothing of it is then kept).
     */
    public CompletableFuture<SpoolReceipt> append(SpoolRequest request) {
        CompletableFuture<SpoolReceipt> receipt = new CompletableFuture<>();
        if (closed) {
            receipt.completeExceptionally(new SpoolWriteException("the spool is closed"));
            return receipt;
        }
        queue.add(new PendingAppend(request, receipt));
        return receipt;
    }

    /** Entries waiting in the spool. */
    public long entries() {
        return entries.get();
    }

    /** Bytes the waiting entries occupy as stored (framing, metadata and body). */
    public long bytes() {
        return bytes.get();
    }

    /** Forced commits so far: entries divided by commits is how many share one fdatasync. */
    public long commits() {
        return commits.get();
    }

    public Path directory() {
        return dir;
    }

    private void commitLoop() {
        List<PendingAppend> batch = new ArrayList<>(MAX_BATCH);
        boolean stopping = false;
        while (!stopping || !queue.isEmpty()) {
            try {
                PendingAppend first = stopping ? queue.poll() : queue.take();
                if (first == null) {
                    break;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
            } catch (InterruptedException e) {
                stopping = true;
                continue;
            }
            if (batch.remove(STOP)) {
                stopping = true;
            }
            if (!batch.isEmpty()) {
                commit(batch);
            }
            batch.clear();
        }
    }

    private void commit(List<PendingAppend> batch) {
        List<SpoolRequest> requests = new ArrayList<>(batch.size());
        for (PendingAppend pending : batch) {
            requests.add(pending.request());
        }
        try {
            if (writer == null || writer.broken() || writer.size() >= segmentTargetBytes) {
                roll();
            }
            long first = nextSeq;
            nextSeq += batch.size();
            List<SegmentWriter.Written> written = writer.commit(first, requests);
            commits.incrementAndGet();
            for (int i = 0; i < batch.size(); i++) {
                SegmentWriter.Written entry = written.get(i);
                entries.incrementAndGet();
                bytes.addAndGet(entry.size());
                batch.get(i).receipt().complete(new SpoolReceipt(entry.seq(), entry.size()));
            }
        } catch (IOException | RuntimeException e) {
            SpoolWriteException failure = new SpoolWriteException("spool write failed: " + e.getMessage(), e);
            LOG.error("spool write of {} entries failed: {}", batch.size(), e.toString());
            for (PendingAppend pending : batch) {
                pending.receipt().completeExceptionally(failure);
            }
        }
    }

    private void roll() throws IOException {
        if (writer != null) {
            SegmentWriter old = writer;
            writer = null;
            old.close();
        }
        writer = SegmentWriter.create(dir, nextSeq);
    }

    /** Stops taking appends, commits what is already queued, and closes the files. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        queue.add(STOP);
        try {
            committer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (writer != null) {
            writer.close();
        }
    }
}
