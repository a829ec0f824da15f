package dev.mcpd.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spool's writing side: one thread that takes every append waiting (up to {@link #MAX_BATCH}), writes them with
 * one gathering write, forces the segment once, and only then completes their futures — then tells the
 * {@link SpoolLedger}. It also rolls to a new segment past the target size, forces acknowledgements at least every
 * {@link #ACK_FLUSH_INTERVAL}, and, while writes fail and nothing comes to try again, probes the directory.
 */
final class GroupCommitter {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /** Entries per group commit, at most: bounds the latency one batch adds to the next. */
    static final int MAX_BATCH = 512;
    /** Acknowledgements are forced at least this often while any are pending. */
    static final Duration ACK_FLUSH_INTERVAL = Duration.ofMillis(200);
    /** While writes fail and no request comes to try again, the committer tries this often itself. */
    static final Duration WRITE_PROBE_INTERVAL = Duration.ofSeconds(1);
    /** The file a write probe creates, forces and deletes; no segment name can look like it. */
    static final String WRITE_PROBE_FILE = ".write-probe";

    record PendingAppend(SpoolRequest request, CompletableFuture<SpoolReceipt> receipt, long reserved,
                         LongConsumer beforeDelivery) {
    }

    private static final PendingAppend STOP = new PendingAppend(null, null, 0, null);
    /** Wakes the committer to force the acknowledgements now ({@link #forceAcks}). */
    private static final PendingAppend FORCE_ACKS = new PendingAppend(null, null, -1, null);

    private final Path dir;
    private final long segmentTargetBytes;
    private final WriteChannels channels;
    private final SpoolBound bound;
    private final SpoolLedger ledger;
    private final BlockingQueue<PendingAppend> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    /** Callers waiting for the acknowledgements written so far to be forced. */
    private final Queue<CompletableFuture<Void>> ackWaiters = new ConcurrentLinkedQueue<>();
    private SegmentWriter writer;
    private long nextSeq;
    /** The highest sequence number handed out (committed), this run or an earlier one. */
    private volatile long newestSeq;
    /** Why the last commit failed, until one succeeds again (or a probe shows the spool writable): readiness. */
    private volatile String writeProblem;
    private long lastWriteProbeNanos;

    /** The directory opened: every commit and probe first checks its name still leads there. */
    private final DirectoryIdentity identity;

    GroupCommitter(Path dir, DirectoryIdentity identity, long segmentTargetBytes, WriteChannels channels,
                   SpoolBound bound, SpoolLedger ledger, SpoolRecovery.Recovered recovered) {
        this.dir = dir;
        this.identity = identity;
        this.segmentTargetBytes = segmentTargetBytes;
        this.channels = channels;
        this.bound = bound;
        this.ledger = ledger;
        this.writer = recovered.writer();
        this.nextSeq = recovered.nextSeq();
        // Every number below the new segment's name may have been handed out before (it is never given again).
        this.newestSeq = nextSeq - 1;
        this.thread = new Thread(this::commitLoop, "spool-committer");
    }

    void start() {
        thread.start();
    }

    void enqueue(PendingAppend append) {
        queue.add(append);
    }

    /**
     * Commits what is already queued, then stops, and closes the segment being written; returns its size, or -1 when
     * there is none or its writer broke.
     */
    long stop() throws IOException {
        queue.add(STOP);
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (writer == null) {
            return -1;
        }
        writer.close();
        return writer.broken() ? -1 : writer.size();
    }

    long newestSeq() {
        return newestSeq;
    }

    /**
     * Completes once every acknowledgement written before this call is forced: the committer forces them at once
     * (callers asking together share one force), rather than at its next {@link #ACK_FLUSH_INTERVAL}.
     * Completes exceptionally when they could not be forced, or the spool stopped first.
     */
    CompletableFuture<Void> forceAcks() {
        CompletableFuture<Void> forced = new CompletableFuture<>();
        ackWaiters.add(forced);
        queue.add(FORCE_ACKS);
        return forced;
    }

    long commits() {
        return commits.get();
    }

    long accepted() {
        return accepted.get();
    }

    String writeProblem() {
        return writeProblem;
    }

    void noteWriteProblem(String problem) {
        writeProblem = problem;
    }

    private void commitLoop() {
        List<PendingAppend> batch = new ArrayList<>(MAX_BATCH);
        boolean stopping = false;
        long lastAckFlush = System.nanoTime();
        while (!stopping || !queue.isEmpty()) {
            if (System.nanoTime() - lastAckFlush >= ACK_FLUSH_INTERVAL.toNanos()) {
                ledger.flushAcks();
                lastAckFlush = System.nanoTime();
            }
            if (writeProblem != null && !stopping && queue.isEmpty()) {
                probeWrites();
            }
            try {
                PendingAppend first = stopping
                        ? queue.poll()
                        : queue.poll(ACK_FLUSH_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (stopping) {
                        break;
                    }
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
            } catch (InterruptedException e) {
                stopping = true;
                continue;
            }
            if (batch.removeIf(pending -> pending == STOP)) { // by identity: the markers are equal records
                stopping = true;
            }
            boolean forceAsked = batch.removeIf(pending -> pending == FORCE_ACKS);
            if (!batch.isEmpty()) {
                commit(batch);
            }
            batch.clear();
            if (forceAsked) {
                forceAcksForWaiters();
                lastAckFlush = System.nanoTime();
            }
        }
        failAckWaiters();
    }

    private void forceAcksForWaiters() {
        List<CompletableFuture<Void>> waiting = new ArrayList<>();
        for (CompletableFuture<Void> waiter; (waiter = ackWaiters.poll()) != null; ) {
            waiting.add(waiter);
        }
        Optional<IOException> failed = ledger.flushAcks();
        for (CompletableFuture<Void> waiter : waiting) {
            if (failed.isEmpty()) {
                waiter.complete(null);
            } else {
                waiter.completeExceptionally(failed.get());
            }
        }
    }

    private void failAckWaiters() {
        for (CompletableFuture<Void> waiter; (waiter = ackWaiters.poll()) != null; ) {
            waiter.completeExceptionally(new IOException("the spool stopped before the acknowledgements were forced"));
        }
    }

    private void commit(List<PendingAppend> batch) {
        List<SpoolRequest> requests = new ArrayList<>(batch.size());
        for (PendingAppend pending : batch) {
            requests.add(pending.request());
        }
        try {
            identity.verify();
            if (writer == null || writer.broken() || writer.size() >= segmentTargetBytes) {
                roll();
            }
            long first = nextSeq;
            nextSeq += batch.size();
            List<EntryLocation> written = writer.commit(first, requests);
            commits.incrementAndGet();
            writable();
            for (int i = 0; i < batch.size(); i++) {
                if (batch.get(i).beforeDelivery() != null) {
                    batch.get(i).beforeDelivery().accept(written.get(i).seq());
                }
            }
            ledger.appended(written);
            accepted.addAndGet(written.size());
            newestSeq = first + batch.size() - 1;
            for (int i = 0; i < batch.size(); i++) {
                EntryLocation entry = written.get(i);
                // The reservation was computed without encoding: should it ever differ, the stored size wins.
                long misestimate = entry.size() - batch.get(i).reserved();
                if (misestimate != 0) {
                    bound.giveBack(-misestimate);
                }
                batch.get(i).receipt().complete(new SpoolReceipt(entry.seq(), entry.size()));
            }
        } catch (IOException | RuntimeException e) {
            writeProblem = oneLine(e);
            SpoolWriteException failure = new SpoolWriteException("spool write failed: " + e.getMessage(), e);
            // Logged once per batch at DEBUG: the ingest step says it to the operator, a line a second at most.
            LOG.debug("spool write of {} entries failed: {}", batch.size(), e.toString());
            for (PendingAppend pending : batch) {
                bound.giveBack(pending.reserved());
                pending.receipt().completeExceptionally(failure);
            }
        }
    }

    private void roll() throws IOException {
        long sealedSize = -1;
        if (writer != null) {
            SegmentWriter old = writer;
            writer = null;
            sealedSize = old.broken() ? -1 : old.size();
            old.close();
        }
        // A roll that failed half-way (the file made, its directory not forced) left an empty file of this name.
        writer = SegmentWriter.createOrReuseEmpty(dir, nextSeq, channels);
        ledger.rolled(nextSeq, sealedSize);
    }

    /**
     * While writes fail and nothing comes to try again, readiness would stay 503 for ever (and a load balancer sends
     * nothing that could show otherwise): so the committer tries itself, once a {@link Spool#WRITE_PROBE_INTERVAL} —
     * a new segment if the current one is broken or gone, its reachability, and a probe file created, forced and
     * deleted (a full disk refuses it as it refuses an entry).
     */
    private void probeWrites() {
        long now = System.nanoTime();
        if (now - lastWriteProbeNanos < WRITE_PROBE_INTERVAL.toNanos()) {
            return;
        }
        lastWriteProbeNanos = now;
        try {
            identity.verify();
            if (writer == null || writer.broken()) {
                roll();
            }
            writer.ensureReachable();
            Path probe = dir.resolve(WRITE_PROBE_FILE);
            // Through the same channels as the segments: a disk that refuses their writes refuses the probe's.
            // Never through a link someone put under the probe's name.
            try (FileChannel channel = channels.wrap(probe, FileChannel.open(probe, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS))) {
                channel.write(ByteBuffer.allocate(4096));
                channel.force(false);
            } finally {
                Files.deleteIfExists(probe);
            }
            writable();
        } catch (IOException | RuntimeException e) {
            writeProblem = oneLine(e);
        }
    }

    private void writable() {
        if (writeProblem != null) {
            writeProblem = null;
            LOG.info("spool at {} is writable again", dir);
        }
    }

    static String oneLine(Throwable e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (e instanceof NoSuchFileException missing) {
            message = "no such file or directory: " + missing.getFile();
        } else if (e instanceof AccessDeniedException denied) {
            message = "permission denied: " + denied.getFile();
        } else if (e instanceof FileSystemException fs && fs.getReason() != null) {
            message = fs.getFile() + ": " + fs.getReason();
        }
        return message.lines().findFirst().orElse(message);
    }
}
