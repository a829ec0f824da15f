package dev.mcpd.spool;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spool's hand-out ledger: which entries wait, which are out for delivery, which are done — delivery's side of
 * the spool, run by whoever delivers (any number of threads), under one lock. The committer tells it what it wrote
 * ({@link #appended}) and when it began a new segment ({@link #rolled}).
 *
 * <p>A sealed segment that delivery has not reached yet is held as its summary only, and read — every record checked,
 * damage copied to {@code corrupt/} — when delivery first needs one of its entries ({@link #load}); the read happens
 * outside the lock, so appends and other deliveries go on meanwhile, and it brings the segment into the page cache
 * ahead of the entries' own reads.
 */
final class SpoolLedger {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    private final Path dir;
    private final SpoolBound bound;
    private final DrainBarrier barrier = new DrainBarrier();
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong corrupted = new AtomicLong();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition entryAdded = lock.newCondition();
    private final TreeMap<Long, SegmentIndex> segments = new TreeMap<>();
    private SegmentIndex active;
    private final Map<Long, Handout> handedOut = new HashMap<>();
    private final PriorityQueue<Handout> released = new PriorityQueue<>(Comparator.comparingLong(Handout::seq));
    /** Segments being read by {@link #load}, so that one read serves every thread that needs it. */
    private final Map<Long, CompletableFuture<Void>> loading = new HashMap<>();
    private volatile boolean closed;

    /** An entry out for delivery: which segment, which index in it. */
    private record Handout(SegmentIndex segment, int index, long seq) {
    }

    /** The next thing {@link #handOut} found: an entry, or a segment that must be read first. */
    private record Next(Handout handout, SegmentIndex toLoad) {
    }

    SpoolLedger(Path dir, SpoolBound bound, SpoolRecovery.Recovered recovered) {
        this.dir = dir;
        this.bound = bound;
        segments.putAll(recovered.segments());
        active = recovered.active();
        entries.set(recovered.entries());
        bytes.set(recovered.bytes());
        corrupted.set(recovered.corrupted());
    }

    /** Entries just made durable: they can be handed out now. */
    void appended(List<EntryLocation> written) {
        lock.lock();
        try {
            for (EntryLocation entry : written) {
                active.add(entry);
                entries.incrementAndGet();
                bytes.addAndGet(entry.size());
            }
            entryAdded.signalAll();
        } finally {
            lock.unlock();
        }
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
                segments.remove(sealed.firstSeq);
                sealed.delete();
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
     * The oldest entry not yet handed out, waiting up to {@code maxWait} for one to be committed. Empty when none came
     * in time or the spool is closing.
     */
    Optional<SpoolEntry> next(Duration maxWait) throws InterruptedException, IOException {
        return next(maxWait, seq -> { });
    }

    /** As {@link #next(Duration)}; {@code handingOut} is told each sequence number as it is handed out, under the lock. */
    Optional<SpoolEntry> next(Duration maxWait, LongConsumer handingOut) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            Next next;
            lock.lock();
            try {
                next = handOut();
                while (next == null) {
                    long left = deadline - System.nanoTime();
                    if (closed || left <= 0) {
                        return Optional.empty();
                    }
                    entryAdded.awaitNanos(left);
                    next = handOut();
                }
                if (next.handout() != null) {
                    handedOut.put(next.handout().seq(), next.handout());
                    handingOut.accept(next.handout().seq());
                }
            } finally {
                lock.unlock();
            }
            if (next.toLoad() != null) {
                load(next.toLoad());
                continue;
            }
            Handout handout = next.handout();
            try {
                return Optional.of(read(handout));
            } catch (CorruptRecordException e) {
                quarantine(handout, e);
            } catch (NoSuchFileException e) {
                vanished(handout);
            } catch (IOException e) {
                release(handout.seq());
                throw e;
            }
        }
    }

    /**
     * Up to {@code max} entries not out for delivery that were received before {@code cutoffMillis}, oldest first,
     * handed out (for {@code --spool-max-age}). Entries are appended in the order received, so the search stops at the
     * first entry not handed out that is younger.
     */
    List<SpoolEntry> takeReceivedBefore(long cutoffMillis, int max) throws IOException {
        List<Handout> handouts = new ArrayList<>();
        while (true) {
            SegmentIndex toLoad = null;
            lock.lock();
            try {
                for (java.util.Iterator<Handout> again = released.iterator(); again.hasNext()
                        && handouts.size() < max; ) {
                    Handout handout = again.next();
                    if (handout.segment().receivedAt(handout.index()) < cutoffMillis) {
                        again.remove();
                        handouts.add(handout);
                    }
                }
                for (SegmentIndex segment : segments.values()) {
                    if (!segment.loaded()) {
                        if (handouts.size() < max && segment.oldestWaitingReceivedAt() < cutoffMillis) {
                            toLoad = segment;
                        }
                        break;
                    }
                    int index;
                    while (handouts.size() < max && (index = segment.handOutIfReceivedBefore(cutoffMillis)) >= 0) {
                        handouts.add(new Handout(segment, index, segment.seq(index)));
                    }
                    if (handouts.size() >= max || !segment.allHandedOut()) {
                        break;
                    }
                }
                handouts.forEach(handout -> handedOut.put(handout.seq(), handout));
            } finally {
                lock.unlock();
            }
            if (toLoad == null) {
                break;
            }
            load(toLoad);
        }
        List<SpoolEntry> taken = new ArrayList<>(handouts.size());
        for (int i = 0; i < handouts.size(); i++) {
            Handout handout = handouts.get(i);
            try {
                taken.add(read(handout));
            } catch (CorruptRecordException e) {
                quarantine(handout, e);
            } catch (NoSuchFileException e) {
                vanished(handout);
            } catch (IOException e) {
                handouts.subList(i, handouts.size()).forEach(unread -> release(unread.seq()));
                taken.forEach(read -> release(read.seq()));
                throw e;
            }
        }
        return taken;
    }

    private Next handOut() {
        Handout again = released.poll();
        if (again != null) {
            return new Next(again, null);
        }
        for (SegmentIndex segment : segments.values()) {
            if (!segment.loaded()) {
                return new Next(null, segment);
            }
            int index = segment.handOut();
            if (index >= 0) {
                return new Next(new Handout(segment, index, segment.seq(index)), null);
            }
        }
        return null;
    }

    /**
     * Reads a segment known by its summary — outside the lock, once however many threads ask — and takes its
     * entries into the ledger. Damage found is copied to {@code corrupt/} as at a start; entries it cost are taken out
     * of the counts.
     */
    private void load(SegmentIndex segment) throws IOException {
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
            Long next;
            lock.lock();
            try {
                next = segments.higherKey(segment.firstSeq);
            } finally {
                lock.unlock();
            }
            SegmentScan scan = SegmentScan.of(SpoolFiles.segment(dir, segment.firstSeq), next == null ? -1 : next);
            boolean damageKept = SpoolRecovery.keepDamage(dir, scan, corrupted);
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
                    entries.addAndGet(-lostEntries);
                    bytes.addAndGet(-lostBytes);
                    bound.giveBack(lostBytes);
                }
                if (!scan.regions().isEmpty() || lostEntries != 0) {
                    // The summary no longer tells what the segment holds: the next start reads it whole.
                    java.nio.file.Files.deleteIfExists(SegmentSummary.file(dir, segment.firstSeq));
                }
                removeIfFinished(segment);
            } finally {
                lock.unlock();
            }
            barrier.passed(oldestWaitingSeq());
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

    /** A segment not yet read is gone from the directory: its entries cannot be delivered. */
    private void dropVanished(SegmentIndex segment) throws IOException {
        lock.lock();
        try {
            long lost = segment.waiting();
            entries.addAndGet(-lost);
            bytes.addAndGet(-segment.waitingBytes());
            bound.giveBack(segment.waitingBytes());
            remove(segment);
            LOG.error("spool segment {} is gone from {} (deleted while the relay ran): its {} waiting entries"
                    + " cannot be read and are not delivered", SpoolFiles.segment(dir, segment.firstSeq)
                    .getFileName(), dir, lost);
        } finally {
            lock.unlock();
        }
        barrier.passed(oldestWaitingSeq());
    }

    private SpoolEntry read(Handout handout) throws IOException, CorruptRecordException {
        SegmentIndex segment = handout.segment();
        return SpoolReader.readEntry(readerOf(segment), segment.offset(handout.index()), segment.size(handout.index()),
                ref -> segment.credentialsFor(ref).get(ref));
    }

    /** The segment's read channel, opened under the lock on first use; reads through it need no lock. */
    private FileChannel readerOf(SegmentIndex segment) throws IOException {
        lock.lock();
        try {
            return segment.reader();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Keeps the raw bytes of an unreadable entry in corrupt/ (named, like damage found at start, by its segment and
     * offset), then takes it out of delivery. If the copy fails, the entry stays in its segment, out of delivery until
     * the next start, which finds the damage again: it is never dropped without a copy.
     */
    private void quarantine(Handout handout, CorruptRecordException why) throws IOException {
        SegmentIndex segment = handout.segment();
        long offset = segment.offset(handout.index());
        String name = Quarantine.name(segment.firstSeq, offset);
        corrupted.incrementAndGet();
        try {
            name = Quarantine.keep(dir, segment.firstSeq, readerOf(segment), offset, segment.size(handout.index()))
                    .name();
        } catch (IOException e) {
            LOG.error("spool entry {} is damaged ({}) and could not be kept in {}/{} ({}); left in its segment and"
                    + " out of delivery until the next start", handout.seq(), why.getMessage(),
                    Quarantine.DIRECTORY, name, e.toString());
            lock.lock();
            try {
                handedOut.remove(handout.seq());
            } finally {
                lock.unlock();
            }
            return;
        }
        LOG.warn("spool entry {} is damaged ({}); kept in {}/{} and taken out of delivery", handout.seq(),
                why.getMessage(), Quarantine.DIRECTORY, name);
        done(handout.seq());
    }

    /**
     * The segment file of a handed-out entry is gone (the spool directory was removed or emptied while the relay ran)
     * and was never opened for reading: its waiting entries cannot be read, now or after a restart. They are taken out
     * of the spool's counts with one ERROR line, so delivery goes on with the rest instead of failing on them for ever.
     */
    private void vanished(Handout handout) throws IOException {
        lock.lock();
        try {
            handedOut.remove(handout.seq());
            SegmentIndex segment = handout.segment();
            int lost = 0;
            for (int i = 0; i < segment.count(); i++) {
                if (segment.markDone(i)) {
                    lost++;
                    entries.decrementAndGet();
                    bytes.addAndGet(-segment.size(i));
                    bound.giveBack(segment.size(i));
                }
            }
            if (lost > 0) {
                LOG.error("spool segment {} is gone from {} (deleted while the relay ran): its {} waiting entries"
                        + " cannot be read and are not delivered", SpoolFiles.segment(dir, segment.firstSeq)
                        .getFileName(), dir, lost);
            }
            removeIfFinished(segment);
        } finally {
            lock.unlock();
        }
        barrier.passed(oldestWaitingSeq());
    }

    /** Called under the lock: a segment with nothing left to deliver leaves the ledger and the disk. */
    private void removeIfFinished(SegmentIndex segment) throws IOException {
        if (segment.finished()) {
            remove(segment);
        }
    }

    private void remove(SegmentIndex segment) throws IOException {
        segments.remove(segment.firstSeq);
        segment.delete();
    }

    /** The entry is finished with (delivered or dead-lettered): it leaves the spool. */
    void done(long seq) throws IOException {
        done(new long[] {seq}, 1);
    }

    /**
     * The first {@code count} of {@code seqs} are finished with, as {@link #done(long)} each, under one hold of the
     * lock and with one acknowledgement write per segment. An entry that is not out for delivery is an
     * IllegalStateException, thrown once the others are done.
     */
    void done(long[] seqs, int count) throws IOException {
        long oldestWaiting;
        String notOut = null;
        lock.lock();
        try {
            List<SegmentIndex> touched = new ArrayList<>(2);
            for (int i = 0; i < count; i++) {
                Handout handout = handedOut.remove(seqs[i]);
                if (handout == null) {
                    notOut = notOut == null ? "entry " + seqs[i] + " is not out for delivery" : notOut;
                    continue;
                }
                SegmentIndex segment = handout.segment();
                if (segment.markDoneLater(handout.index())) {
                    entries.decrementAndGet();
                    bytes.addAndGet(-segment.size(handout.index()));
                    bound.giveBack(segment.size(handout.index()));
                }
                if (!touched.contains(segment)) { // a batch's entries come from one segment or a few
                    touched.add(segment);
                }
            }
            for (SegmentIndex segment : touched) {
                segment.writeAcks();
            }
            for (SegmentIndex segment : touched) {
                removeIfFinished(segment);
            }
            oldestWaiting = barrier.waiters() == 0 ? -1 : oldestWaitingSeqLocked();
        } finally {
            lock.unlock();
        }
        barrier.passed(oldestWaiting);
        if (notOut != null) {
            throw new IllegalStateException(notOut);
        }
    }

    /** The entry was not finished with (the relay is stopping): it goes out again, before newer ones. */
    void release(long seq) {
        lock.lock();
        try {
            Handout handout = handedOut.remove(seq);
            if (handout != null) {
                released.add(handout);
                entryAdded.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    int outForDelivery() {
        return underLock(handedOut::size);
    }

    long oldestWaitingSeq() {
        return underLock(this::oldestWaitingSeqLocked);
    }

    private long oldestWaitingSeqLocked() {
        for (SegmentIndex segment : segments.values()) {
            long oldest = segment.oldestWaitingSeq();
            if (oldest >= 0) {
                return oldest;
            }
        }
        return -1;
    }

    long waitingThrough(long seq) {
        return underLock(() -> {
            long waiting = 0;
            for (SegmentIndex segment : segments.headMap(seq, true).values()) {
                waiting += segment.waitingThrough(seq);
            }
            return waiting;
        });
    }

    Optional<Long> oldestReceivedAtMillis() {
        return underLock(() -> {
            for (SegmentIndex segment : segments.values()) {
                long oldest = segment.oldestWaitingReceivedAt();
                if (oldest >= 0) {
                    return Optional.of(oldest);
                }
            }
            return Optional.<Long>empty();
        });
    }

    /** Entries whose place is held in memory now: those of the segments delivery reads and of the one appended to. */
    long indexedEntries() {
        return underLock(() -> {
            long indexed = 0;
            for (SegmentIndex segment : segments.values()) {
                indexed += segment.loaded() ? segment.count() : 0;
            }
            return indexed;
        });
    }

    /** A read of the ledger's state for the gauges, the status page and the barrier. */
    private <T> T underLock(Supplier<T> read) {
        lock.lock();
        try {
            return read.get();
        } finally {
            lock.unlock();
        }
    }

    DrainBarrier barrier() {
        return barrier;
    }

    long entries() {
        return entries.get();
    }

    long bytes() {
        return bytes.get();
    }

    long corrupted() {
        return corrupted.get();
    }

    /**
     * Acknowledgements written since the last flush are forced (losing them in a power cut only sends again); returns
     * why they could not be, if they could not.
     */
    Optional<IOException> flushAcks() {
        lock.lock();
        try {
            for (SegmentIndex segment : segments.values()) {
                segment.forceAcks();
            }
            return Optional.empty();
        } catch (IOException e) {
            LOG.warn("could not force delivery acknowledgements (entries may be sent again after a crash): {}",
                    e.toString());
            return Optional.of(e);
        } finally {
            lock.unlock();
        }
    }

    /** Whether the entry {@code seq} is still in the spool: waiting, out for delivery, or given back. */
    boolean holds(long seq) {
        lock.lock();
        try {
            Map.Entry<Long, SegmentIndex> segment = segments.floorEntry(seq);
            return segment != null && segment.getValue().holds(seq);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Wakes every waiting {@link #next} (they find the spool closed) and closes the segments' files. The segment that
     * took appends ({@code activeSize} bytes; -1 if its writer broke) gets its summary: the next start need not read it.
     */
    void close(long activeSize) throws IOException {
        closed = true;
        lock.lock();
        try {
            entryAdded.signalAll();
            if (activeSize >= 0 && active.count() > 0 && active.loaded()) {
                try {
                    active.summarize(activeSize).write(dir, active.firstSeq);
                } catch (IOException e) {
                    LOG.debug("could not write the summary of spool segment {}: {}", active.firstSeq, e.toString());
                }
            }
            flushAcks();
            for (SegmentIndex segment : segments.values()) {
                segment.close();
            }
        } finally {
            lock.unlock();
        }
    }
}
