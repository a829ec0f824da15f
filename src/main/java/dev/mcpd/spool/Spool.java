package dev.mcpd.spool;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
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
 *
 * <h2>Delivery</h2>
 * {@link #next} hands out the oldest entry not yet handed out (entries given back with {@link #release} first, oldest
 * first), waking as soon as a commit adds one; an entry is never out to two callers at once. {@link #done} removes it:
 * its sequence number goes to the segment's {@code .ack} file, and a sealed segment whose entries are all done is
 * deleted with its files. Acknowledgements are forced lazily (at most {@link #ACK_FLUSH_INTERVAL} late): one lost in a
 * power cut only makes that entry go out again, and its idempotency key makes the copy a duplicate upstream. An entry
 * whose bytes fail their checksum when read is copied to {@code corrupt/} and taken out of delivery, never deleted
 * silently.
 *
 * <h2>Damage found at start</h2>
 * Recovery reads every record and checksum ({@link SegmentScan}); after a bad record it resynchronises at the next
 * whole record, so damage in the middle of a segment hides only itself. Each damaged region is copied durably to
 * {@code corrupt/<segment>-<offset>.bytes} ({@link Quarantine}) with one WARN line, once (a region already there is
 * not copied, counted or warned about again), and the whole entries before and after it are delivered. A torn tail,
 * the batch a crash interrupted, was never acknowledged: one INFO line, nothing copied. A segment that holds no whole
 * entry goes only once its damage is safely copied; if the copy fails, it stays as it is. Opening never fails because
 * of what a segment holds, so the relay cannot crash-loop on a damaged spool. {@link #corrupted} counts the damage
 * found since start.
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
    private final SpoolBound bound;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong corrupted = new AtomicLong();
    /** Why the last commit failed, until one succeeds again (or a probe shows the spool writable): readiness. */
    private volatile String writeProblem;
    private long lastWriteProbeNanos;
    private volatile boolean closed;
    private SegmentWriter writer;
    private long nextSeq;
    /** The highest sequence number handed out (committed), this run or an earlier one. */
    private volatile long newestSeq;
    private String id;
    private final DrainBarrier barrier = new DrainBarrier();

    /** Acknowledgements are forced at least this often while any are pending. */
    static final Duration ACK_FLUSH_INTERVAL = Duration.ofMillis(200);
    /** While writes fail and no request comes to try again, the committer tries this often itself. */
    static final Duration WRITE_PROBE_INTERVAL = Duration.ofSeconds(1);
    /** The file a write probe creates, forces and deletes; no segment name can look like it. */
    static final String WRITE_PROBE_FILE = ".write-probe";

    // Delivery state, guarded by lock.
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition entryAdded = lock.newCondition();
    private final TreeMap<Long, SegmentIndex> segments = new TreeMap<>();
    private SegmentIndex active;
    private final Map<Long, Handout> handedOut = new HashMap<>();
    private final PriorityQueue<Handout> released = new PriorityQueue<>(Comparator.comparingLong(Handout::seq));

    /** An entry out for delivery: which segment, which index in it. */
    private record Handout(SegmentIndex segment, int index, long seq) {
    }

    private record PendingAppend(SpoolRequest request, CompletableFuture<SpoolReceipt> receipt, long reserved,
                                 LongConsumer beforeDelivery) {
    }

    private static final PendingAppend STOP = new PendingAppend(null, null, 0, null);

    /**
     * How the spool is sized.
     *
     * @param segmentTargetBytes a segment takes appends until it is this large
     * @param maxBytes           the bound (SPEC §6): the bytes waiting entries occupy, plus those of entries being
     *                           written, never exceed it
     */
    public record Options(long segmentTargetBytes, long maxBytes) {
        public static Options unbounded() {
            return new Options(DEFAULT_SEGMENT_TARGET_BYTES, Long.MAX_VALUE);
        }

        public Options withMaxBytes(long bound) {
            return new Options(segmentTargetBytes, bound);
        }
    }

    private final WriteChannels channels;

    /** Held while the spool is open: no second process (or second instance) opens it. */
    private SpoolLock ownership;

    private Spool(Path dir, Options options, WriteChannels channels) {
        this.dir = dir;
        this.channels = channels;
        this.segmentTargetBytes = options.segmentTargetBytes();
        this.bound = new SpoolBound(options.maxBytes());
        this.committer = new Thread(this::commitLoop, "spool-committer");
    }

    public static Spool open(Path dir) throws IOException {
        return open(dir, Options.unbounded());
    }

    public static Spool open(Path dir, long segmentTargetBytes) throws IOException {
        return open(dir, new Options(segmentTargetBytes, Long.MAX_VALUE));
    }

    /** Opens (creating if needed) the spool in {@code dir}, recovering what a previous run left there. */
    public static Spool open(Path dir, Options options) throws IOException {
        return open(dir, options, WriteChannels.AS_OPENED);
    }

    /** As {@link #open(Path, Options)}, writing through {@code channels} (tests: a disk that fails). */
    static Spool open(Path dir, Options options, WriteChannels channels) throws IOException {
        SpoolFiles.createDirectory(dir);
        SpoolLock ownership = SpoolLock.tryAcquire(dir).orElseThrow(() -> new IOException(
                "another relay has it open (" + SpoolLock.FILE + " is locked): one relay per spool directory"));
        try {
            Spool spool = new Spool(dir, options, channels);
            spool.ownership = ownership;
            spool.adopt(SpoolRecovery.recover(dir, channels));
            spool.id = SpoolIdentity.readOrCreate(dir);
            spool.committer.start();
            return spool;
        } catch (IOException | RuntimeException e) {
            ownership.close();
            throw e;
        }
    }

    private void adopt(SpoolRecovery.Recovered recovered) {
        segments.putAll(recovered.segments());
        active = recovered.active();
        writer = recovered.writer();
        nextSeq = recovered.nextSeq();
        // Every number below the new segment's name may have been handed out before (it is never given again).
        newestSeq = nextSeq - 1;
        entries.set(recovered.entries());
        bytes.set(recovered.bytes());
        bound.recovered(recovered.bytes());
        corrupted.set(recovered.corrupted());
    }

    /**
     * Appends a request. The returned future completes with the entry's receipt once the entry is durable, or
     * exceptionally with {@link SpoolWriteException} when it could not be written (nothing of it is then kept).
     */
    public CompletableFuture<SpoolReceipt> append(SpoolRequest request) {
        return append(request, null);
    }

    /**
     * As {@link #append(SpoolRequest)}; {@code beforeDelivery} (if not null) is given the entry's sequence number once
     * it is durable and before delivery can take it — so that whoever waits for its fate cannot miss it. It runs on
     * the committer thread: it must be quick and must not block.
     */
    public CompletableFuture<SpoolReceipt> append(SpoolRequest request, LongConsumer beforeDelivery) {
        CompletableFuture<SpoolReceipt> receipt = new CompletableFuture<>();
        if (closed) {
            receipt.completeExceptionally(new SpoolWriteException("the spool is closed"));
            return receipt;
        }
        long size = RecordCodec.entrySize(request);
        if (!bound.reserve(size)) {
            receipt.completeExceptionally(new SpoolFullException(bound.maxBytes()));
            return receipt;
        }
        queue.add(new PendingAppend(request, receipt, size, beforeDelivery));
        return receipt;
    }

    /**
     * Whether a request with a body of {@code bodyBytes} could be taken now: an early, cheap check before its body is
     * read (the append checks again, atomically). A "no" counts as a refusal.
     */
    public boolean admits(long bodyBytes) {
        return bound.admits(bodyBytes);
    }

    /** The bound, in stored bytes. */
    public long maxBytes() {
        return bound.maxBytes();
    }

    /** Entries taken since start. */
    public long accepted() {
        return accepted.get();
    }

    /** Requests refused since start because they would not fit. */
    public long refusedFull() {
        return bound.refused();
    }

    /** Whether a request was refused for lack of space within {@code window}. */
    public boolean refusedFullWithin(Duration window) {
        return bound.refusedWithin(window);
    }

    /**
     * The oldest entry not yet handed out, waiting up to {@code maxWait} for one to be committed. Empty when none came
     * in time or the spool is closing. The caller must later call {@link #done} or {@link #release} with its seq.
     */
    public Optional<SpoolEntry> next(Duration maxWait) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            Handout handout;
            lock.lock();
            try {
                handout = handOut();
                while (handout == null) {
                    long left = deadline - System.nanoTime();
                    if (closed || left <= 0) {
                        return Optional.empty();
                    }
                    entryAdded.awaitNanos(left);
                    handout = handOut();
                }
                handedOut.put(handout.seq(), handout);
            } finally {
                lock.unlock();
            }
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
     * Hands out up to {@code max} entries not out for delivery that were received before {@code cutoffMillis}, oldest
     * first — for {@code --spool-max-age}, which moves them to dead/. As for {@link #next}, the caller must later call
     * {@link #done} or {@link #release} with each seq. Entries are appended in the order received, so the search stops
     * at the first entry not handed out that is younger.
     */
    public List<SpoolEntry> takeReceivedBefore(long cutoffMillis, int max) throws IOException {
        List<Handout> handouts = new ArrayList<>();
        lock.lock();
        try {
            for (java.util.Iterator<Handout> again = released.iterator(); again.hasNext() && handouts.size() < max; ) {
                Handout handout = again.next();
                if (handout.segment().receivedAt(handout.index()) < cutoffMillis) {
                    again.remove();
                    handouts.add(handout);
                }
            }
            for (SegmentIndex segment : segments.values()) {
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

    private Handout handOut() {
        Handout again = released.poll();
        if (again != null) {
            return again;
        }
        for (SegmentIndex segment : segments.values()) {
            int index = segment.handOut();
            if (index >= 0) {
                return new Handout(segment, index, segment.seq(index));
            }
        }
        return null;
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
            name = Quarantine.keep(dir, segment.firstSeq, readerOf(segment), offset, segment.size(handout.index())).name();
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
            if (segment.finished()) {
                segments.remove(segment.firstSeq);
                segment.delete();
            }
        } finally {
            lock.unlock();
        }
        barrier.passed(oldestWaitingSeq());
    }

    /**
     * Damaged entries and regions found since start: copied to {@code corrupt/} (or, if that failed, left in place)
     * and taken out of delivery. Damage kept at an earlier start is not counted again.
     */
    public long corrupted() {
        return corrupted.get();
    }

    /** How many entries are out for delivery: handed out, neither done nor released yet. */
    public int outForDelivery() {
        lock.lock();
        try {
            return handedOut.size();
        } finally {
            lock.unlock();
        }
    }

    /** The entry is finished with (delivered or dead-lettered): it leaves the spool. */
    public void done(long seq) throws IOException {
        long oldestWaiting;
        lock.lock();
        try {
            Handout handout = handedOut.remove(seq);
            if (handout == null) {
                throw new IllegalStateException("entry " + seq + " is not out for delivery");
            }
            SegmentIndex segment = handout.segment();
            if (segment.markDone(handout.index())) {
                entries.decrementAndGet();
                bytes.addAndGet(-segment.size(handout.index()));
                bound.giveBack(segment.size(handout.index()));
            }
            if (segment.finished()) {
                segments.remove(segment.firstSeq);
                segment.delete();
            }
            oldestWaiting = barrier.waiters() == 0 ? -1 : oldestWaitingSeqLocked();
        } finally {
            lock.unlock();
        }
        barrier.passed(oldestWaiting);
    }

    /** This spool's identity ({@code mcpd-relay-id}): made with the spool, the same across restarts and crashes. */
    public String id() {
        return id;
    }

    /** The highest sequence number handed out so far, by this run or an earlier one on this spool; 0 if none. */
    public long newestSeq() {
        return newestSeq;
    }

    /** Sequence number of the oldest entry still in the spool (handed out or not), or -1 when there is none. */
    public long oldestWaitingSeq() {
        lock.lock();
        try {
            return oldestWaitingSeqLocked();
        } finally {
            lock.unlock();
        }
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

    /** Entries still in the spool whose sequence number is at most {@code seq}. */
    public long waitingThrough(long seq) {
        lock.lock();
        try {
            long waiting = 0;
            for (SegmentIndex segment : segments.headMap(seq, true).values()) {
                waiting += segment.waitingThrough(seq);
            }
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Completes once no entry with a sequence number up to {@code seq} is left in the spool (each was delivered or
     * moved to dead/), at once if none is now. A caller that stops waiting first calls {@link #stopAwaiting}.
     */
    public CompletableFuture<Void> awaitLeft(long seq) {
        CompletableFuture<Void> drained = barrier.join(seq);
        long oldest = oldestWaitingSeq(); // after joining: an entry done in between is not missed
        if (oldest < 0 || oldest > seq) {
            barrier.passed(oldest);
        }
        return drained;
    }

    /** A caller of {@link #awaitLeft} for {@code seq} stops waiting; {@code drained} is the future it was given. */
    public void stopAwaiting(long seq, CompletableFuture<Void> drained) {
        barrier.leave(seq, drained);
    }

    /** Callers waiting in {@link #awaitLeft} now. */
    public int awaiting() {
        return barrier.waiters();
    }

    /** The entry was not finished with (the relay is stopping): it goes out again, before newer ones. */
    public void release(long seq) {
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

    /** Receive time (epoch ms) of the oldest entry still in the spool, handed out or not; empty when there is none. */
    public Optional<Long> oldestReceivedAtMillis() {
        lock.lock();
        try {
            for (SegmentIndex segment : segments.values()) {
                long oldest = segment.oldestWaitingReceivedAt();
                if (oldest >= 0) {
                    return Optional.of(oldest);
                }
            }
            return Optional.empty();
        } finally {
            lock.unlock();
        }
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
        long lastAckFlush = System.nanoTime();
        while (!stopping || !queue.isEmpty()) {
            if (System.nanoTime() - lastAckFlush >= ACK_FLUSH_INTERVAL.toNanos()) {
                flushAcks();
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
            List<EntryLocation> written = writer.commit(first, requests);
            commits.incrementAndGet();
            writable();
            for (int i = 0; i < batch.size(); i++) {
                if (batch.get(i).beforeDelivery() != null) {
                    batch.get(i).beforeDelivery().accept(written.get(i).seq());
                }
            }
            lock.lock();
            try {
                for (EntryLocation entry : written) {
                    active.add(entry);
                    entries.incrementAndGet();
                    bytes.addAndGet(entry.size());
                    accepted.incrementAndGet();
                }
                entryAdded.signalAll();
            } finally {
                lock.unlock();
            }
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
        if (writer != null) {
            SegmentWriter old = writer;
            writer = null;
            old.close();
        }
        // A roll that failed half-way (the file made, its directory not forced) left an empty file of this name.
        writer = SegmentWriter.createOrReuseEmpty(dir, nextSeq, channels);
        lock.lock();
        try {
            SegmentIndex sealed = active;
            sealed.seal();
            if (sealed.finished()) {
                segments.remove(sealed.firstSeq);
                sealed.delete();
            }
            active = new SegmentIndex(dir, nextSeq);
            segments.put(active.firstSeq, active);
        } finally {
            lock.unlock();
        }
    }

    /**
     * While writes fail and nothing comes to try again, readiness would stay 503 for ever (and a load balancer sends
     * nothing that could show otherwise): so the committer tries itself, once a {@link #WRITE_PROBE_INTERVAL} — a new
     * segment if the current one is broken or gone, its reachability, and a probe file created, forced and deleted
     * (a full disk refuses it as it refuses an entry).
     */
    private void probeWrites() {
        long now = System.nanoTime();
        if (now - lastWriteProbeNanos < WRITE_PROBE_INTERVAL.toNanos()) {
            return;
        }
        lastWriteProbeNanos = now;
        try {
            if (writer == null || writer.broken()) {
                roll();
            }
            writer.ensureReachable();
            Path probe = dir.resolve(WRITE_PROBE_FILE);
            try (FileChannel channel = FileChannel.open(probe, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                channel.write(java.nio.ByteBuffer.allocate(4096));
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

    /**
     * Why writing to the spool fails now (the last commit failed and none succeeded since): a full disk, a read-only
     * or vanished directory. Empty while writes succeed.
     */
    public Optional<String> writeProblem() {
        if (writeProblem == null && !closed && !(Files.isDirectory(dir) && Files.isWritable(dir))) {
            // Seen before any request tried: the committer now probes until it is writable again.
            writeProblem = "spool directory " + dir + (Files.isDirectory(dir) ? " is not writable" : " is gone");
        }
        return Optional.ofNullable(writeProblem);
    }

    private static String oneLine(Throwable e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (e instanceof NoSuchFileException missing) {
            message = "no such file or directory: " + missing.getFile();
        } else if (e instanceof java.nio.file.AccessDeniedException denied) {
            message = "permission denied: " + denied.getFile();
        } else if (e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null) {
            message = fs.getFile() + ": " + fs.getReason();
        }
        return message.lines().findFirst().orElse(message);
    }

    private void flushAcks() {
        lock.lock();
        try {
            for (SegmentIndex segment : segments.values()) {
                segment.forceAcks();
            }
        } catch (IOException e) {
            LOG.warn("could not force delivery acknowledgements (entries may be sent again after a crash): {}",
                    e.toString());
        } finally {
            lock.unlock();
        }
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
        lock.lock();
        try {
            entryAdded.signalAll();
            flushAcks();
            for (SegmentIndex segment : segments.values()) {
                segment.close();
            }
        } finally {
            lock.unlock();
            ownership.close();
        }
    }
}
