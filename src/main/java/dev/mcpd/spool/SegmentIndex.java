package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Map;

/**
 * What the spool knows in memory of one segment: where each entry sits, when it was received, which are done, and how
 * far delivery has handed them out — 28 bytes per entry, for the segments delivery is working through and the one
 * taking appends. A sealed segment delivery has not reached is only its {@link SegmentSummary} (a few dozen bytes,
 * whatever it holds) until the spool {@link #load}s it, so a backlog costs memory per segment, not per entry. Guarded
 * by the spool's lock; reads of entry bytes happen outside it (positional reads are safe to run concurrently).
 */
final class SegmentIndex implements Closeable {

    final long firstSeq;
    private final Path dir;
    private final AckLog acks;
    private long[] seqs = new long[64];
    private long[] offsets = new long[64];
    private int[] sizes = new int[64];
    private long[] receivedAt = new long[64];
    private int count;
    /** While its entries are not in memory: what they are, in numbers. Null once loaded. */
    private SegmentSummary summary;
    private final BitSet done = new BitSet();
    private int doneCount;
    /** Entries before it were handed out (or are done). */
    private int cursor;
    /** Entries before it are all done: the oldest waiting entry is at or after it. */
    private int firstNotDone;
    private boolean sealed;
    /** Holds damage not yet safely copied to corrupt/: its files must stay, even once every entry is done. */
    private boolean retained;
    private FileChannel reader;
    private Map<Integer, Credential> credentials;
    /** Entries marked done whose acknowledgements are not written yet: the first {@link #unwrittenAcks}. */
    private long[] unwrittenAckSeqs = new long[0];
    private int unwrittenAcks;

    SegmentIndex(Path dir, long firstSeq) {
        this.dir = dir;
        this.firstSeq = firstSeq;
        this.acks = new AckLog(dir, firstSeq);
    }

    /** Builds the index of a segment left by an earlier run: sealed, with its acknowledgements applied. */
    static SegmentIndex recovered(Path dir, SegmentScan scan) throws IOException {
        SegmentIndex index = new SegmentIndex(dir, scan.firstSeq());
        for (EntryLocation entry : scan.entries()) {
            index.add(entry);
        }
        index.acks.readInto(index.done, index::indexOf);
        index.doneCount = index.done.cardinality();
        index.sealed = true;
        index.advancePastDone();
        return index;
    }

    /**
     * A sealed segment known by its summary alone: nothing of it handed out or done yet. Its entries are read when
     * delivery reaches it ({@link #load}).
     */
    static SegmentIndex summarized(Path dir, long firstSeq, SegmentSummary summary) {
        SegmentIndex index = new SegmentIndex(dir, firstSeq);
        index.dropEntries(summary);
        index.sealed = true;
        return index;
    }

    /** Whether its entries are in memory (else only its summary is, and it must be {@link #load}ed to hand out). */
    boolean loaded() {
        return summary == null;
    }

    /** The summary it stands for while not loaded; null when loaded. */
    SegmentSummary summary() {
        return summary;
    }

    /** Takes the entries a scan of its file found in place of its summary (acknowledgements applied). */
    void load(SegmentScan scan) throws IOException {
        summary = null;
        seqs = new long[Math.max(64, scan.entries().size())];
        offsets = new long[seqs.length];
        sizes = new int[seqs.length];
        receivedAt = new long[seqs.length];
        count = 0;
        for (EntryLocation entry : scan.entries()) {
            add(entry);
        }
        acks.readInto(done, this::indexOf);
        doneCount = done.cardinality();
        advancePastDone();
    }

    /** What a summary of it now says: its entries as they are (call when sealed). */
    SegmentSummary summarize(long fileSize) {
        long bytes = 0;
        for (int i = 0; i < count; i++) {
            bytes += sizes[i];
        }
        return new SegmentSummary(count, seqs[0], seqs[count - 1], bytes, receivedAt[0], fileSize);
    }

    /** Whether nothing of it was handed out or is done: its entries can leave memory until delivery comes. */
    boolean untouched() {
        return summary == null && count > 0 && cursor == 0 && doneCount == 0 && !retained;
    }

    /** Lets its entries go from memory, keeping {@code summary} of them; it must be {@link #untouched()}. */
    void unload(SegmentSummary summary) {
        dropEntries(summary);
    }

    private void dropEntries(SegmentSummary summary) {
        this.summary = summary;
        count = (int) summary.count();
        seqs = null;
        offsets = null;
        sizes = null;
        receivedAt = null;
    }

    void add(EntryLocation entry) {
        if (count == seqs.length) {
            int grown = count * 2;
            seqs = Arrays.copyOf(seqs, grown);
            offsets = Arrays.copyOf(offsets, grown);
            sizes = Arrays.copyOf(sizes, grown);
            receivedAt = Arrays.copyOf(receivedAt, grown);
        }
        seqs[count] = entry.seq();
        offsets[count] = entry.offset();
        sizes[count] = entry.size();
        receivedAt[count] = entry.receivedAtMillis();
        count++;
    }

    /** Whether the entry {@code seq} is in this segment and not done (an unloaded segment: within its summary). */
    boolean holds(long seq) {
        if (!loaded()) {
            return summary != null && seq >= summary.firstSeq() && seq <= summary.lastSeq();
        }
        int index = indexOf(seq);
        return index >= 0 && !done.get(index);
    }

    int indexOf(long seq) {
        int at = Arrays.binarySearch(seqs, 0, count, seq);
        return at >= 0 ? at : -1;
    }

    void seal() {
        sealed = true;
    }

    /** Keeps the segment's files even when every entry is done (they hold damage that is nowhere else). */
    void retain() {
        retained = true;
    }

    /** Sealed and every entry done: its files can go. */
    boolean finished() {
        return sealed && doneCount == count && !retained;
    }

    int waiting() {
        return count - doneCount;
    }

    long waitingBytes() {
        if (summary != null) {
            return summary.bytes();
        }
        long total = 0;
        for (int i = 0; i < count; i++) {
            if (!done.get(i)) {
                total += sizes[i];
            }
        }
        return total;
    }

    /** The next entry not yet handed out, advancing the cursor; -1 when there is none. */
    int handOut() {
        int next = nextWaiting();
        if (next >= 0) {
            cursor++;
        }
        return next;
    }

    /** The entry {@link #handOut} would hand out, left waiting; -1 when every entry was handed out (or is done). */
    int nextWaiting() {
        while (cursor < count && done.get(cursor)) {
            cursor++;
        }
        return cursor < count ? cursor : -1;
    }

    /**
     * The next entry not yet handed out, if it was received before {@code cutoffMillis} (advancing the cursor); -1
     * when there is none or it is younger.
     */
    int handOutIfReceivedBefore(long cutoffMillis) {
        int next = nextWaiting();
        return next >= 0 && receivedAt[next] < cutoffMillis ? handOut() : -1;
    }

    /** Every entry was handed out (or is done). */
    boolean allHandedOut() {
        return summary == null && nextWaiting() < 0;
    }

    long receivedAt(int index) {
        return receivedAt[index];
    }

    long seq(int index) {
        return seqs[index];
    }

    int size(int index) {
        return sizes[index];
    }

    /** Receive time of the oldest entry not done, or -1. */
    long oldestWaitingReceivedAt() {
        if (summary != null) {
            return summary.firstReceivedAt();
        }
        advancePastDone();
        return firstNotDone < count ? receivedAt[firstNotDone] : -1;
    }

    /** Sequence number of the oldest entry not done, or -1. */
    long oldestWaitingSeq() {
        if (summary != null) {
            return summary.firstSeq();
        }
        advancePastDone();
        return firstNotDone < count ? seqs[firstNotDone] : -1;
    }

    /** Entries not done whose sequence number is at most {@code seq}. */
    int waitingThrough(long seq) {
        if (summary != null) {
            // None is done; the numbers between first and last are its entries' (a gap only where a write failed).
            return seq >= summary.lastSeq() ? count : seq < summary.firstSeq() ? 0
                    : (int) Math.min(count, seq - summary.firstSeq() + 1);
        }
        advancePastDone();
        int waiting = 0;
        for (int i = firstNotDone; i < count && seqs[i] <= seq; i++) {
            if (!done.get(i)) {
                waiting++;
            }
        }
        return waiting;
    }

    /**
     * Marks the entry done and records it in the acknowledgement log; false if it already was. An acknowledgement that
     * cannot be written (the directory gone or read-only) is logged, not thrown: the entry is done all the same, and
     * at worst it goes out once more after a restart, where its idempotency key makes it a duplicate.
     */
    boolean markDone(int index) {
        boolean marked = markDoneLater(index);
        writeAcks();
        return marked;
    }

    /**
     * As {@link #markDone}, but its acknowledgement waits for {@link #writeAcks()}: the entries of a batch delivered
     * are acknowledged with one write.
     */
    boolean markDoneLater(int index) {
        if (done.get(index)) {
            return false;
        }
        done.set(index);
        doneCount++;
        if (unwrittenAcks == unwrittenAckSeqs.length) {
            unwrittenAckSeqs = Arrays.copyOf(unwrittenAckSeqs, Math.max(16, unwrittenAcks * 2));
        }
        unwrittenAckSeqs[unwrittenAcks++] = seqs[index];
        return true;
    }

    /** Writes the acknowledgements {@link #markDoneLater} left. */
    void writeAcks() {
        acks.appendOrWarn(unwrittenAckSeqs, unwrittenAcks);
        unwrittenAcks = 0;
    }

    int count() {
        return count;
    }

    private void advancePastDone() {
        while (firstNotDone < count && done.get(firstNotDone)) {
            firstNotDone++;
        }
    }

    /** The channel entries are read through, opened on first use. Called under the spool's lock. */
    FileChannel reader() throws IOException {
        if (reader == null) {
            reader = FileChannel.open(SpoolFiles.segment(dir, firstSeq), StandardOpenOption.READ);
        }
        return reader;
    }

    /**
     * The segment's credentials, read on first use and again when an entry names one not yet seen: a credential is
     * always durable before the first entry that refers to it.
     */
    Map<Integer, Credential> credentialsFor(int ref) throws IOException {
        if (credentials == null || (ref != 0 && !credentials.containsKey(ref))) {
            credentials = SegmentScan.credentialsOf(dir, firstSeq);
        }
        return credentials;
    }

    long offset(int index) {
        return offsets[index];
    }

    void forceAcks() throws IOException {
        acks.forceIfDirty();
    }

    /**
     * Removes the segment's files: every entry in it is done. The segment goes first, and its removal is synced before
     * the files that describe it go: a power cut in between leaves those without their segment (the next start removes
     * them, {@link SpoolRecovery}), never a segment without its credentials or its record of deliveries — which would
     * send its delivered entries again, or keep them as damaged.
     */
    void delete() throws IOException {
        close();
        if (Files.deleteIfExists(SpoolFiles.segment(dir, firstSeq))) {
            DurableDirectories.sync(dir);
        }
        Files.deleteIfExists(new AckLog(dir, firstSeq).file());
        Files.deleteIfExists(SegmentSummary.file(dir, firstSeq));
        Files.deleteIfExists(SpoolFiles.credentials(dir, firstSeq));
    }

    @Override
    public void close() throws IOException {
        try (acks) {
            if (reader != null) {
                reader.close();
                reader = null;
            }
        }
    }
}
