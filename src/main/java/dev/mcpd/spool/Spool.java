package dev.mcpd.spool;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

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
 *     00000000000000000001.ack    the sequence numbers of its entries that are done     (mode 0600)
 *     00000000000000000001.sum    what it holds, in numbers, written when it is sealed  (mode 0600)
 *     00000000000000004711.seg    the next segment, named by the first seq it may hold
 *     id                          this spool's identity (mcpd-relay-id)
 *     spool.lock                  locked while a relay has the spool open
 *     dead/  replay/  corrupt/    dead letters, dead letters handed back for delivery, damaged bytes
 * </pre>
 * Records are framed and checksummed as {@link RecordCodec} describes. A segment takes appends until it passes
 * {@code segmentTargetBytes}; then a new one is created. At every start a new segment is created for appends and
 * the old ones are only read; its name carries the sequence high-water mark, so sequence numbers only grow even when
 * every older segment has been delivered and deleted.
 *
 * <h2>Group commit</h2>
 * One committer thread ({@link GroupCommitter}) takes everything that is waiting (up to
 * {@link GroupCommitter#MAX_BATCH} entries), appends it with one gathering write, forces it once, and only then
 * completes the batch's futures. Under light load a batch is one entry and waits for nothing; under heavy load the
 * cost of one {@code fdatasync} is shared by the whole batch. Credentials live in the segment's {@code .cred} file,
 * written once per distinct credential and forced before the entries that refer to it, so that bodies and keys never
 * share a file.
 *
 * <h2>Delivery</h2>
 * The hand-out ledger ({@link SpoolLedger}) is delivery's side. {@link #next} hands out the oldest entry not yet
 * handed out (entries given back with {@link #release} first, oldest first), waking as soon as a commit adds one; an
 * entry is never out to two callers at once. {@link #done} removes it: its sequence number goes to the segment's
 * {@code .ack} file, and a sealed segment whose entries are all done is deleted with its files. Acknowledgements are
 * forced lazily (at most {@link GroupCommitter#ACK_FLUSH_INTERVAL} late): one lost in a power cut only makes that
 * entry go out again, and its idempotency key makes the copy a duplicate upstream. An entry whose bytes fail their
 * checksum when read is copied to {@code corrupt/} and taken out of delivery, never deleted silently.
 *
 * <h2>Damage found when a segment is read</h2>
 * Reading a segment — at start, for those that need it; when delivery reaches one known by its summary — checks every
 * record and checksum ({@link SegmentScan}); after a bad record it resynchronises at the next
 * whole record, so damage in the middle of a segment hides only itself. Each damaged region is copied durably to
 * {@code corrupt/<segment>-<offset>.bytes} ({@link Quarantine}) with one WARN line, once (a region already there is
 * not copied, counted or warned about again), and the whole entries before and after it are delivered. A torn tail,
 * the batch a crash interrupted, was never acknowledged: one INFO line, nothing copied. A segment that holds no whole
 * entry goes only once its damage is safely copied; if the copy fails, it stays as it is. Opening never fails because
 * of what a segment holds, so the relay cannot crash-loop on a damaged spool. {@link #corrupted} counts the damage
 * found since start.
 */
public final class Spool implements Closeable {

    public static final long DEFAULT_SEGMENT_TARGET_BYTES = 64L * 1024 * 1024;

    private final Path dir;
    private final SpoolBound bound;
    private final SpoolLedger ledger;
    private final SpoolCounts counts;
    private final DrainBarrier barrier = new DrainBarrier();
    private final GroupCommitter committer;
    private final String id;
    /** Held while the spool is open: no second process (or second instance) opens it. */
    private final SpoolLock ownership;
    private volatile boolean closed;

    /**
     * How the spool is sized.
     *
     * @param segmentTargetBytes a segment takes appends until it is this large
     * @param maxBytes           the bound: the bytes waiting entries occupy, plus those of entries being written,
     *                           never exceed it
     */
    public record Options(long segmentTargetBytes, long maxBytes) {
        public static Options unbounded() {
            return new Options(DEFAULT_SEGMENT_TARGET_BYTES, Long.MAX_VALUE);
        }

        public Options withMaxBytes(long bound) {
            return new Options(segmentTargetBytes, bound);
        }
    }

    private Spool(Path dir, Options options, WriteChannels channels, SpoolLock ownership,
                  SpoolRecovery.Recovered recovered, String id, DirectoryIdentity identity) {
        this.dir = dir;
        this.ownership = ownership;
        this.id = id;
        this.bound = new SpoolBound(options.maxBytes());
        bound.recovered(recovered.bytes());
        this.counts = new SpoolCounts(bound, recovered);
        this.ledger = new SpoolLedger(dir, counts, barrier, recovered);
        this.committer = new GroupCommitter(dir, identity, options.segmentTargetBytes(), channels, bound, ledger,
                recovered);
    }

    public static Spool open(Path dir) throws IOException {
        return open(dir, Options.unbounded());
    }

    public static Spool open(Path dir, long segmentTargetBytes) throws IOException {
        return open(dir, new Options(segmentTargetBytes, Long.MAX_VALUE));
    }

    /**
     * Opens (creating if needed, owner-only) the spool in {@code dir}, recovering what a previous run left there.
     * Throws {@link UnsafeSpoolDirectoryException} when another user could write it ({@link SpoolDirectoryOwnership}).
     */
    public static Spool open(Path dir, Options options) throws IOException {
        return open(dir, options, WriteChannels.AS_OPENED);
    }

    /** As {@link #open(Path, Options)}, writing through {@code channels} (tests: a disk that fails). */
    static Spool open(Path dir, Options options, WriteChannels channels) throws IOException {
        SpoolFiles.createDirectory(dir);
        // The directory judged is the one written, however its name is used later.
        DirectoryIdentity identity = DirectoryIdentity.of(dir);
        // Before anything in it is read or written: another user who can write here could have planted entries.
        SpoolDirectoryOwnership.check(dir);
        SpoolLock ownership = SpoolLock.tryAcquire(dir).orElseThrow(() -> new IOException(
                "another relay has it open (" + SpoolLock.FILE + " is locked): one relay per spool directory"));
        try {
            SpoolRecovery.Recovered recovered = SpoolRecovery.recover(dir, channels);
            identity.verify();
            Spool spool = new Spool(dir, options, channels, ownership, recovered, SpoolIdentity.readOrCreate(dir),
                    identity);
            spool.committer.start();
            return spool;
        } catch (IOException | RuntimeException e) {
            ownership.close();
            throw e;
        }
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
        committer.enqueue(new GroupCommitter.PendingAppend(request, receipt, size, beforeDelivery));
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

    /**
     * Counts the bytes {@code kept} reports — what the relay keeps beside the spool, its dead letters — against the
     * bound as well: what the relay writes to disk is bounded as a whole, and a sender whose requests are all refused
     * for good fills it as any would. {@code kept} is read at every append: it must not block.
     */
    public void countAgainstBound(LongSupplier kept) {
        bound.countBeside(kept);
    }

    /** The bytes that count against the bound: the spool's and those kept beside it. */
    public long boundedBytes() {
        return bytes() + bound.besideBytes();
    }

    /** Entries taken since start. */
    public long accepted() {
        return committer.accepted();
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
        return ledger.next(maxWait);
    }

    /**
     * As {@link #next(Duration)}; {@code handingOut} is told the sequence number of each entry as it is handed out,
     * in the order entries are handed out (under the spool's lock: it must be quick) — before the entry is read, so
     * that callers taking entries side by side can tell which of them holds the older one. An entry is handed out only
     * with room taken for its stored size from {@code room}, in the same step; while there is none, the oldest entry
     * stays waiting, and the result is empty if no room came within {@code maxWait}.
     */
    public Optional<SpoolEntry> next(Duration maxWait, LongConsumer handingOut, ReadRoom room)
            throws InterruptedException, IOException {
        return ledger.next(maxWait, handingOut, room);
    }

    /**
     * Hands out up to {@code max} entries not out for delivery that were received before {@code cutoffMillis}, oldest
     * first — for {@code --spool-max-age}, which moves them to dead/. As for {@link #next}, the caller must later call
     * {@link #done} or {@link #release} with each seq.
     */
    public List<SpoolEntry> takeReceivedBefore(long cutoffMillis, int max) throws IOException {
        return ledger.takeReceivedBefore(cutoffMillis, max);
    }

    /**
     * Damaged entries and regions found since start: copied to {@code corrupt/} (or, if that failed, left in place)
     * and taken out of delivery. Damage kept at an earlier start is not counted again.
     */
    public long corrupted() {
        return counts.corrupted();
    }

    /** How many entries are out for delivery: handed out, neither done nor released yet. */
    public int outForDelivery() {
        return ledger.outForDelivery();
    }

    /** The entry is finished with (delivered or dead-lettered): it leaves the spool. */
    public void done(long seq) throws IOException {
        ledger.done(seq);
    }

    /**
     * The first {@code count} of {@code seqs} are finished with, as {@link #done(long)} each but at once: a delivered
     * batch's acknowledgements take one write per segment, not one each. An entry not out for delivery is an
     * IllegalStateException, thrown once the others are done.
     */
    public void done(long[] seqs, int count) throws IOException {
        ledger.done(seqs, count);
    }

    /** Forces the acknowledgements written so far, now rather than at the committer's next interval (tests). */
    void flushAcks() {
        ledger.flushAcks();
    }

    /**
     * Completes once the acknowledgements of every entry done before this call are on disk: what an ordered stream
     * waits for before its next entry leaves, so that no restart or power cut sends an older entry again after a newer
     * one was delivered. Callers asking at once share one force. Completes exceptionally when they could not be forced.
     */
    public CompletableFuture<Void> doneDurably() {
        return committer.forceAcks();
    }

    /** Whether the entry {@code seq} is still in the spool (waiting, out for delivery, or given back). */
    public boolean holds(long seq) {
        return ledger.holds(seq);
    }

    /** The entry was not finished with (the relay is stopping): it goes out again, before newer ones. */
    public void release(long seq) {
        ledger.release(seq);
    }

    /** This spool's identity ({@code mcpd-relay-id}): made with the spool, the same across restarts and crashes. */
    public String id() {
        return id;
    }

    /** The highest sequence number handed out so far, by this run or an earlier one on this spool; 0 if none. */
    public long newestSeq() {
        return committer.newestSeq();
    }

    /** Sequence number of the oldest entry still in the spool (handed out or not), or -1 when there is none. */
    public long oldestWaitingSeq() {
        return ledger.oldestWaitingSeq();
    }

    /** Entries still in the spool whose sequence number is at most {@code seq}. */
    public long waitingThrough(long seq) {
        return ledger.waitingThrough(seq);
    }

    /**
     * Completes once no entry with a sequence number up to {@code seq} is left in the spool (each was delivered or
     * moved to dead/), at once if none is now. A caller that stops waiting first calls {@link #stopAwaiting}.
     */
    public CompletableFuture<Void> awaitLeft(long seq) {
        return barrier.join(seq, this::oldestWaitingSeq);
    }

    /** A caller of {@link #awaitLeft} for {@code seq} stops waiting; {@code drained} is the future it was given. */
    public void stopAwaiting(long seq, CompletableFuture<Void> drained) {
        barrier.leave(seq, drained);
    }

    /** Callers waiting in {@link #awaitLeft} now. */
    public int awaiting() {
        return barrier.waiters();
    }

    /** Receive time (epoch ms) of the oldest entry still in the spool, handed out or not; empty when there is none. */
    public Optional<Long> oldestReceivedAtMillis() {
        return ledger.oldestReceivedAtMillis();
    }

    /** Entries waiting in the spool. */
    public long entries() {
        return counts.entries();
    }

    /** Bytes the waiting entries occupy as stored (framing, metadata and body). */
    public long bytes() {
        return counts.bytes();
    }

    /**
     * Entries whose place is held in memory now (the segments delivery is reading and the one taking appends): what
     * a backlog costs the heap, by segment rather than by entry.
     */
    long indexedEntries() {
        return ledger.indexedEntries();
    }

    /** Forced commits so far: entries divided by commits is how many share one fdatasync. */
    public long commits() {
        return committer.commits();
    }

    public Path directory() {
        return dir;
    }

    /**
     * Why writing to the spool fails now (the last commit failed and none succeeded since): a full disk, a read-only
     * or vanished directory. Empty while writes succeed.
     */
    public Optional<String> writeProblem() {
        if (committer.writeProblem() == null && !closed && !(Files.isDirectory(dir) && Files.isWritable(dir))) {
            // Seen before any request tried: the committer now probes until it is writable again.
            committer.noteWriteProblem("spool directory " + dir + (Files.isDirectory(dir) ? " is not writable"
                    : " is gone"));
        }
        return Optional.ofNullable(committer.writeProblem());
    }

    /** Stops taking appends, commits what is already queued, and closes the files. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            ledger.close(committer.stop());
        } finally {
            ownership.close();
        }
    }
}
