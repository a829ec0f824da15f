package dev.mcpd.spool;

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
 * far delivery has handed them out. 28 bytes per entry, so a million waiting entries cost about 27 MiB. Guarded by the
 * spool's lock; reads of entry bytes happen outside it (positional reads are safe to run concurrently).
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
        while (cursor < count && done.get(cursor)) {
            cursor++;
        }
        return cursor < count ? cursor++ : -1;
    }

    /**
     * The next entry not yet handed out, if it was received before {@code cutoffMillis} (advancing the cursor); -1
     * when there is none or it is younger.
     */
    int handOutIfReceivedBefore(long cutoffMillis) {
        while (cursor < count && done.get(cursor)) {
            cursor++;
        }
        return cursor < count && receivedAt[cursor] < cutoffMillis ? cursor++ : -1;
    }

    /** Every entry was handed out (or is done). */
    boolean allHandedOut() {
        while (cursor < count && done.get(cursor)) {
            cursor++;
        }
        return cursor >= count;
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
        advancePastDone();
        return firstNotDone < count ? receivedAt[firstNotDone] : -1;
    }

    /** Sequence number of the oldest entry not done, or -1. */
    long oldestWaitingSeq() {
        advancePastDone();
        return firstNotDone < count ? seqs[firstNotDone] : -1;
    }

    /** Entries not done whose sequence number is at most {@code seq}. */
    int waitingThrough(long seq) {
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
        if (done.get(index)) {
            return false;
        }
        done.set(index);
        doneCount++;
        acks.appendOrWarn(seqs[index]);
        return true;
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

    /** Removes the segment's files: every entry in it is done. */
    void delete() throws IOException {
        close();
        Files.deleteIfExists(acks.file());
        Files.deleteIfExists(SpoolFiles.credentials(dir, firstSeq));
        Files.deleteIfExists(SpoolFiles.segment(dir, firstSeq));
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
