package dev.mcpd.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The segments the ledger hands out from, oldest first, and which of them are held in memory. A sealed segment that
 * delivery has not reached yet is held as its summary only, and read — every record checked, damage copied to
 * {@code corrupt/} — when delivery first needs one of its entries ({@link #load}); the read happens outside the lock,
 * so appends and other deliveries go on meanwhile, and it brings the segment into the page cache ahead of the entries'
 * own reads. A segment leaves memory and the disk once every entry in it is done.
 *
 * <p>It shares the ledger's lock: methods said to run under the lock expect the caller to hold it; {@link #rolled}
 * and {@link #load} take it themselves, around their reads and writes of files.
 */
final class LedgerSegments {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    private final Path dir;
    private final ReentrantLock lock;
    private final SpoolCounts counts;
    private final TreeMap<Long, SegmentIndex> segments = new TreeMap<>();
    private SegmentIndex active;
    /** Segments being read by {@link #load}, so that one read serves every thread that needs it. */
    private final Map<Long, CompletableFuture<Void>> loading = new HashMap<>();

    LedgerSegments(Path dir, ReentrantLock lock, SpoolCounts counts, SpoolRecovery.Recovered recovered) {
        this.dir = dir;
        this.lock = lock;
        this.counts = counts;
        segments.putAll(recovered.segments());
        active = recovered.active();
    }

    /** Under the lock: every segment, oldest first. */
    Collection<SegmentIndex> oldestFirst() {
        return segments.values();
    }

    /** Under the lock: an entry just made durable joins the segment appended to. */
    void appended(EntryLocation entry) {
        active.add(entry);
        counts.added(entry);
    }

    /**
     * The committer sealed the active segment ({@code sealedSize} bytes long) and appends to a new one from
     * {@code nextSeq} on. The sealed one's summary is written beside it; if delivery is still working through older
     * segments, its entries leave memory until delivery comes.
     */
    void rolled(long nextSeq, long sealedSize) throws IOException {
        SegmentIndex sealed;
        lock.lock();
        try {
            sealed = active;
            sealed.seal();
            if (sealed.finished()) {
                remove(sealed);
                sealed = null;
            }
            active = new SegmentIndex(dir, nextSeq);
            segments.put(active.firstSeq, active);
        } finally {
            lock.unlock();
        }
        if (sealed == null || sealed.count() == 0 || sealedSize < 0) {
            return; // nothing left, or its writer broke (a start reads such a segment whole)
        }
        SegmentSummary summary;
        lock.lock();
        try {
            summary = sealed.summarize(sealedSize);
        } finally {
            lock.unlock();
        }
        try {
            summary.write(dir, sealed.firstSeq);
        } catch (IOException e) {
            LOG.debug("could not write the summary of spool segment {}: {}", sealed.firstSeq, e.toString());
            return; // a segment without a summary is read whole at the next start: slower, not wrong
        }
        lock.lock();
        try {
            if (sealed.untouched() && deliveryIsBehind(sealed)) {
                sealed.unload(summary);
            }
        } finally {
            lock.unlock();
        }
    }

    /** An older segment still has entries not handed out: delivery will not reach {@code segment} soon. */
    private boolean deliveryIsBehind(SegmentIndex segment) {
        for (SegmentIndex older : segments.headMap(segment.firstSeq, false).values()) {
            if (!older.allHandedOut()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reads a segment known by its summary — outside the lock, once however many threads ask — and takes its
     * entries into the ledger. Damage found is copied to {@code corrupt/} as at a start; entries it cost are taken out
     * of the counts. A segment file gone from the directory costs all its waiting entries.
     */
    void load(SegmentIndex segment) throws IOException {
        CompletableFuture<Void> done;
        boolean mine = false;
        lock.lock();
        try {
            if (segment.loaded()) {
                return;
            }
            done = loading.get(segment.firstSeq);
            if (done == null) {
                done = new CompletableFuture<>();
                loading.put(segment.firstSeq, done);
                mine = true;
            }
        } finally {
            lock.unlock();
        }
        if (!mine) {
            done.join();
            return;
        }
        try {
            read(segment);
        } catch (NoSuchFileException e) {
            dropVanished(segment);
        } finally {
            lock.lock();
            try {
                loading.remove(segment.firstSeq);
            } finally {
                lock.unlock();
            }
            done.complete(null);
        }
    }

    private void read(SegmentIndex segment) throws IOException {
        Long next;
        lock.lock();
        try {
            next = segments.higherKey(segment.firstSeq);
        } finally {
            lock.unlock();
        }
        SegmentScan scan = SegmentScan.of(SpoolFiles.segment(dir, segment.firstSeq), next == null ? -1 : next);
        boolean damageKept = SpoolRecovery.keepDamage(dir, scan, counts.corruptedCount());
        lock.lock();
        try {
            SegmentSummary summary = segment.summary();
            segment.load(scan);
            if (!damageKept) {
                segment.retain();
            }
            long lostEntries = summary.count() - segment.count();
            long lostBytes = summary.bytes() - segment.waitingBytes();
            if (lostEntries != 0 || lostBytes != 0) {
                counts.left(lostEntries, lostBytes);
            }
            if (!scan.regions().isEmpty() || lostEntries != 0) {
                // The summary no longer tells what the segment holds: the next start reads it whole.
                Files.deleteIfExists(SegmentSummary.file(dir, segment.firstSeq));
            }
            removeIfFinished(segment);
        } finally {
            lock.unlock();
        }
    }

    /** A segment not yet read is gone from the directory: its entries cannot be delivered. */
    private void dropVanished(SegmentIndex segment) throws IOException {
        lock.lock();
        try {
            long lost = segment.waiting();
            counts.left(lost, segment.waitingBytes());
            remove(segment);
            logLost(segment, lost);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: the file of a segment being delivered from is gone and was never opened for reading, so none of
     * its waiting entries can be read, now or after a restart. They are marked done and taken out of the counts.
     */
    void fileLost(SegmentIndex segment) throws IOException {
        int lost = 0;
        for (int i = 0; i < segment.count(); i++) {
            if (segment.markDone(i)) {
                lost++;
                counts.left(1, segment.size(i));
            }
        }
        if (lost > 0) {
            logLost(segment, lost);
        }
        removeIfFinished(segment);
    }

    private void logLost(SegmentIndex segment, long lost) {
        LOG.error("spool segment {} is gone from {} (deleted while the relay ran): its {} waiting entries cannot be read"
                + " and are not delivered", SpoolFiles.segment(dir, segment.firstSeq).getFileName(), dir, lost);
    }

    /** Under the lock: a segment with nothing left to deliver leaves the ledger and the disk. */
    void removeIfFinished(SegmentIndex segment) throws IOException {
        if (segment.finished()) {
            remove(segment);
        }
    }

    private void remove(SegmentIndex segment) throws IOException {
        segments.remove(segment.firstSeq);
        segment.delete();
    }

    /** Under the lock: the oldest entry not yet handed out, or -1. */
    long oldestWaitingSeq() {
        for (SegmentIndex segment : segments.values()) {
            long oldest = segment.oldestWaitingSeq();
            if (oldest >= 0) {
                return oldest;
            }
        }
        return -1;
    }

    /** Under the lock: entries up to {@code seq} not yet done. */
    long waitingThrough(long seq) {
        long waiting = 0;
        for (SegmentIndex segment : segments.headMap(seq, true).values()) {
            waiting += segment.waitingThrough(seq);
        }
        return waiting;
    }

    /** Under the lock: when the oldest entry not yet done was received. */
    Optional<Long> oldestReceivedAtMillis() {
        for (SegmentIndex segment : segments.values()) {
            long oldest = segment.oldestWaitingReceivedAt();
            if (oldest >= 0) {
                return Optional.of(oldest);
            }
        }
        return Optional.empty();
    }

    /** Under the lock: entries whose place is held in memory now. */
    long indexedEntries() {
        long indexed = 0;
        for (SegmentIndex segment : segments.values()) {
            indexed += segment.loaded() ? segment.count() : 0;
        }
        return indexed;
    }

    /** Under the lock: whether the entry {@code seq} is still in a segment. */
    boolean holds(long seq) {
        Map.Entry<Long, SegmentIndex> segment = segments.floorEntry(seq);
        return segment != null && segment.getValue().holds(seq);
    }

    /**
     * Under the lock: forces every segment's acknowledgements written since the last force (losing them in a power cut
     * only sends again); returns why they could not be, if they could not.
     */
    Optional<IOException> forceAcks() {
        try {
            for (SegmentIndex segment : segments.values()) {
                segment.forceAcks();
            }
            return Optional.empty();
        } catch (IOException e) {
            LOG.warn("could not force delivery acknowledgements (entries may be sent again after a crash): {}",
                    e.toString());
            return Optional.of(e);
        }
    }

    /**
     * Under the lock: the segment that took appends ({@code activeSize} bytes; -1 if its writer broke) gets its
     * summary, so the next start need not read it.
     */
    void summarizeActive(long activeSize) {
        if (activeSize >= 0 && active.count() > 0 && active.loaded()) {
            try {
                active.summarize(activeSize).write(dir, active.firstSeq);
            } catch (IOException e) {
                LOG.debug("could not write the summary of spool segment {}: {}", active.firstSeq, e.toString());
            }
        }
    }

    /** Under the lock: closes every segment's files. */
    void close() throws IOException {
        for (SegmentIndex segment : segments.values()) {
            segment.close();
        }
    }
}
