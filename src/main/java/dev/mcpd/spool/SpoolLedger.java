package dev.mcpd.spool;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * The spool's hand-out ledger: which entries wait, which are out for delivery, which are done — delivery's side of
 * the spool, run by whoever delivers (any number of threads), under one lock. The committer tells it what it wrote
 * ({@link #appended}) and when it began a new segment ({@link #rolled}). Which segments it holds, and which of them
 * are in memory, is {@link LedgerSegments}'s; what the spool holds is counted in {@link SpoolCounts}.
 */
final class SpoolLedger {

    private final Path dir;
    private final SpoolCounts counts;
    private final DrainBarrier barrier;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition entryAdded = lock.newCondition();
    private final LedgerSegments segments;
    private final Map<Long, Handout> handedOut = new HashMap<>();
    private final PriorityQueue<Handout> released = new PriorityQueue<>(Comparator.comparingLong(Handout::seq));
    private volatile boolean closed;

    SpoolLedger(Path dir, SpoolCounts counts, DrainBarrier barrier, SpoolRecovery.Recovered recovered) {
        this.dir = dir;
        this.counts = counts;
        this.barrier = barrier;
        this.segments = new LedgerSegments(dir, lock, counts, recovered);
    }

    /** Entries just made durable: they can be handed out now. */
    void appended(List<EntryLocation> written) {
        lock.lock();
        try {
            for (EntryLocation entry : written) {
                segments.appended(entry);
            }
            entryAdded.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The committer sealed the active segment ({@code sealedSize} bytes long) and appends to a new one. */
    void rolled(long nextSeq, long sealedSize) throws IOException {
        segments.rolled(nextSeq, sealedSize);
    }

    /**
     * The oldest entry not yet handed out, waiting up to {@code maxWait} for one to be committed. Empty when none came
     * in time or the spool is closing.
     */
    Optional<SpoolEntry> next(Duration maxWait) throws InterruptedException, IOException {
        return next(maxWait, seq -> { }, ReadRoom.UNBOUNDED);
    }

    /**
     * As {@link #next(Duration)}; {@code handingOut} is told each sequence number as it is handed out, under the lock,
     * and {@code room} is taken for the entry in the same step. When there is no room for the oldest waiting entry,
     * nothing is handed out: the caller waits for room outside the lock, and then for the oldest entry again.
     */
    Optional<SpoolEntry> next(Duration maxWait, LongConsumer handingOut, ReadRoom room)
            throws InterruptedException, IOException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            LedgerNext next;
            lock.lock();
            try {
                next = handOut(room);
                while (next == null) {
                    long left = deadline - System.nanoTime();
                    if (closed || left <= 0) {
                        return Optional.empty();
                    }
                    entryAdded.awaitNanos(left);
                    next = handOut(room);
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
            if (next.handout() == null) {
                if (closed || !room.awaitRoom(next.noRoomFor(), deadline)) {
                    return Optional.empty();
                }
                continue;
            }
            Handout handout = next.handout();
            try {
                Optional<SpoolEntry> entry = readOrSetAside(handout);
                if (entry.isPresent()) {
                    return entry;
                }
                room.giveBack(handout.size());
            } catch (IOException | RuntimeException e) {
                room.giveBack(handout.size()); // the read failed: its room comes back, the entry goes again
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
                for (Iterator<Handout> again = released.iterator(); again.hasNext()
                        && handouts.size() < max; ) {
                    Handout handout = again.next();
                    if (handout.segment().receivedAt(handout.index()) < cutoffMillis) {
                        again.remove();
                        handouts.add(handout);
                    }
                }
                for (SegmentIndex segment : segments.oldestFirst()) {
                    if (!segment.loaded()) {
                        if (handouts.size() < max && segment.oldestWaitingReceivedAt() < cutoffMillis) {
                            toLoad = segment;
                        }
                        break;
                    }
                    int index;
                    while (handouts.size() < max && (index = segment.handOutIfReceivedBefore(cutoffMillis)) >= 0) {
                        handouts.add(new Handout(segment, index));
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
            try {
                readOrSetAside(handouts.get(i)).ifPresent(taken::add);
            } catch (IOException e) {
                handouts.subList(i, handouts.size()).forEach(unread -> release(unread.seq()));
                taken.forEach(read -> release(read.seq()));
                throw e;
            }
        }
        return taken;
    }

    /** The oldest entry waiting, handed out if {@code room} has room for it; null when none waits. */
    private LedgerNext handOut(ReadRoom room) {
        Handout again = released.peek();
        if (again != null) {
            if (!room.tryTake(again.size())) {
                return LedgerNext.noRoom(again.size());
            }
            return LedgerNext.entry(released.poll());
        }
        for (SegmentIndex segment : segments.oldestFirst()) {
            if (!segment.loaded()) {
                return LedgerNext.load(segment);
            }
            int index = segment.nextWaiting();
            if (index >= 0) {
                if (!room.tryTake(segment.size(index))) {
                    return LedgerNext.noRoom(segment.size(index));
                }
                return LedgerNext.entry(new Handout(segment, segment.handOut()));
            }
        }
        return null;
    }

    /** Reads a segment known by its summary (once, however many threads ask), then wakes drains it let through. */
    private void load(SegmentIndex segment) throws IOException {
        segments.load(segment);
        barrier.passed(oldestWaitingSeq());
    }

    /** Reads a handed-out entry; a damaged one is set aside in corrupt/, one whose file is gone given up: empty. */
    private Optional<SpoolEntry> readOrSetAside(Handout handout) throws IOException {
        try {
            return Optional.of(read(handout));
        } catch (CorruptRecordException e) {
            quarantine(handout, e);
        } catch (NoSuchFileException e) {
            vanished(handout);
        }
        return Optional.empty();
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

    /** An unreadable entry is copied to corrupt/ and done with; if the copy fails, it waits out of delivery. */
    private void quarantine(Handout handout, CorruptRecordException why) throws IOException {
        SegmentIndex segment = handout.segment();
        counts.corruptedCount().incrementAndGet();
        if (Quarantine.keepEntry(dir, handout.seq(), segment.firstSeq, readerOf(segment),
                segment.offset(handout.index()), segment.size(handout.index()), why)) {
            done(handout.seq());
            return;
        }
        lock.lock();
        try {
            handedOut.remove(handout.seq());
        } finally {
            lock.unlock();
        }
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
            segments.fileLost(handout.segment());
        } finally {
            lock.unlock();
        }
        barrier.passed(oldestWaitingSeq());
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
                    counts.left(1, segment.size(handout.index()));
                }
                if (!touched.contains(segment)) { // a batch's entries come from one segment or a few
                    touched.add(segment);
                }
            }
            for (SegmentIndex segment : touched) {
                segment.writeAcks();
            }
            for (SegmentIndex segment : touched) {
                segments.removeIfFinished(segment);
            }
            oldestWaiting = barrier.waiters() == 0 ? -1 : segments.oldestWaitingSeq();
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
        return underLock(segments::oldestWaitingSeq);
    }

    long waitingThrough(long seq) {
        return underLock(() -> segments.waitingThrough(seq));
    }

    Optional<Long> oldestReceivedAtMillis() {
        return underLock(segments::oldestReceivedAtMillis);
    }

    /** Entries whose place is held in memory now: those of the segments delivery reads and of the one appended to. */
    long indexedEntries() {
        return underLock(segments::indexedEntries);
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

    /**
     * Acknowledgements written since the last flush are forced (losing them in a power cut only sends again); returns
     * why they could not be, if they could not.
     */
    Optional<IOException> flushAcks() {
        return underLock(segments::forceAcks);
    }

    /** Whether the entry {@code seq} is still in the spool: waiting, out for delivery, or given back. */
    boolean holds(long seq) {
        return underLock(() -> segments.holds(seq));
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
            segments.summarizeActive(activeSize);
            flushAcks();
            segments.close();
        } finally {
            lock.unlock();
        }
    }
}
