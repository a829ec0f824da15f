package dev.mcpd.spool;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * What one segment holds, read from disk: its whole entries, in order, and the regions between or after them that hold
 * no whole entry.
 *
 * <p>Reading does not stop at a bad record: it resynchronises at the next offset where a whole record starts
 * ({@link RecordScanner#resync}) and goes on, so a damaged record in the middle of a segment (bit rot, an overwritten
 * block) hides only itself. A found record counts as an entry only if its sequence number fits where it was found
 * (above the one before it, within the range the segment's name and the next segment's name allow).
 *
 * <p>A region with nothing valid after it is a <em>torn tail</em> when it looks like an append a crash interrupted
 * (a record header cut short, a header whose length runs past the end of the file, or zero bytes a file system
 * exposed) and the segment is the one that was taking appends: the newest, or one whose successor is named right
 * after its last whole entry (what a restart or a roll after the crash creates). No entry of a torn tail was ever
 * acknowledged (its batch's {@code fdatasync} never returned). Every other region is <em>damage</em>: acknowledged
 * bytes the medium lost or changed, garbage written into the file, a sealed segment cut short.
 *
 * @param segment  the segment file
 * @param firstSeq the first sequence number its name allows
 * @param entries  its whole entries, in file order (sequence numbers ascending)
 * @param regions  the stretches holding no whole entry, in file order
 */
record SegmentScan(Path segment, long firstSeq, List<EntryLocation> entries, List<Region> regions) {

    /**
     * Bytes of a segment that hold no whole entry.
     *
     * @param offset where the region starts (where the first bad record was)
     * @param length how many bytes it spans, up to the next whole entry or the end of the file
     * @param torn   a torn tail (never acknowledged), not damage
     * @param reason why its first record was refused
     */
    record Region(long offset, long length, boolean torn, String reason) {

    }

    /** Every segment of a spool directory, oldest first, each scanned knowing the name of the one after it. */
    static List<SegmentScan> scanAll(Path dir) throws IOException {
        List<Path> segments = segmentsIn(dir);
        return scan(segments, segments);
    }

    /**
     * The segments {@code which} of a directory whose segments are {@code all} (oldest first), each scanned knowing
     * the name of the one after it; oldest first.
     */
    static List<SegmentScan> scan(List<Path> all, List<Path> which) throws IOException {
        if (which.isEmpty()) {
            return List.of();
        }
        List<Path> segments = which;
        // Segments are independent, and a scan reads and checks every byte (on the development machine ~2 s for a
        // million 1 KiB entries on one core): scanning them on every core shortens a start with a large backlog.
        ExecutorService pool = Executors.newFixedThreadPool(
                Math.min(segments.size(), Runtime.getRuntime().availableProcessors()), runnable -> {
                    Thread thread = new Thread(runnable, "spool-scan");
                    thread.setDaemon(true);
                    return thread;
                });
        try {
            List<Future<Optional<SegmentScan>>> scans = new ArrayList<>(segments.size());
            for (int i = 0; i < segments.size(); i++) {
                Path segment = segments.get(i);
                int at = all.indexOf(segment);
                long next = at + 1 < all.size() ? SpoolFiles.firstSeqOf(all.get(at + 1)) : -1;
                scans.add(pool.submit(() -> {
                    try {
                        return Optional.of(of(segment, next));
                    } catch (NoSuchFileException e) {
                        // Delivered and deleted between the listing and the scan (a reader beside a running relay).
                        return Optional.empty();
                    }
                }));
            }
            List<SegmentScan> result = new ArrayList<>(segments.size());
            for (Future<Optional<SegmentScan>> scan : scans) {
                result.addAll(scan.get().stream().toList());
            }
            return result;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while scanning the spool");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException("scanning the spool failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    /** Scans a segment as if it were the newest (its tail may be torn). */
    static SegmentScan of(Path segment) throws IOException {
        return of(segment, -1);
    }

    /**
     * Scans a segment.
     *
     * @param nextFirstSeq the first sequence number of the segment after it, or -1 when it is the newest
     */
    static SegmentScan of(Path segment, long nextFirstSeq) throws IOException {
        long firstSeq = SpoolFiles.firstSeqOf(segment);
        List<EntryLocation> entries = new ArrayList<>();
        List<Region> regions = new ArrayList<>();
        try (RecordScanner scanner = new RecordScanner(segment, RecordCodec.ENTRY_MAGIC)) {
            long badFrom = -1;
            String reason = null;
            long previousSeq = firstSeq - 1;
            while (true) {
                long at = scanner.position();
                RecordScanner.Record record;
                try {
                    record = scanner.next();
                } catch (CorruptRecordException e) {
                    if (badFrom < 0) {
                        badFrom = at;
                        reason = e.getMessage();
                    }
                    scanner.resync();
                    continue;
                }
                if (record == null) {
                    break;
                }
                long[] seqAndTime = null;
                String misfit;
                try {
                    seqAndTime = RecordCodec.peekSeqAndReceivedAt(record.payload());
                    misfit = seqAndTime[0] <= previousSeq || (nextFirstSeq >= 0 && seqAndTime[0] >= nextFirstSeq)
                            ? "record at offset " + at + " holds entry " + seqAndTime[0] + ", out of sequence"
                            : null;
                } catch (CorruptRecordException e) {
                    misfit = "record at offset " + at + ": " + e.getMessage();
                }
                if (misfit != null) {
                    if (badFrom < 0) {
                        badFrom = at;
                        reason = misfit;
                    }
                    scanner.seek(at);
                    scanner.resync();
                    continue;
                }
                if (badFrom >= 0) {
                    regions.add(new Region(badFrom, at - badFrom, false, reason));
                    badFrom = -1;
                }
                entries.add(new EntryLocation(seqAndTime[0], record.offset(), record.size(), seqAndTime[1]));
                previousSeq = seqAndTime[0];
            }
            if (badFrom >= 0) {
                long lastSeq = entries.isEmpty() ? firstSeq - 1 : entries.get(entries.size() - 1).seq();
                boolean wasTakingAppends = nextFirstSeq < 0 || nextFirstSeq == lastSeq + 1;
                String tornShape = wasTakingAppends
                        ? tornShape(segment, RecordCodec.ENTRY_MAGIC, badFrom, scanner.fileSize())
                        : null;
                regions.add(tornShape != null
                        ? new Region(badFrom, scanner.fileSize() - badFrom, true, tornShape)
                        : new Region(badFrom, scanner.fileSize() - badFrom, false, reason));
            }
        }
        return new SegmentScan(segment, firstSeq, entries, regions);
    }

    /** Why the bytes from {@code from} to the end look like an interrupted append, or null when they do not. */
    private static String tornShape(Path segment, int magicOfItsRecords, long from, long fileSize) throws IOException {
        long remaining = fileSize - from;
        if (remaining < RecordCodec.HEADER_BYTES) {
            return "torn record header at offset " + from;
        }
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(RecordCodec.HEADER_BYTES);
            RecordScanner.readFully(channel, header, from);
            header.flip();
            int magic = header.getInt();
            int length = header.getInt();
            if (magic == magicOfItsRecords && (length < 0 || length > remaining - RecordCodec.HEADER_BYTES)) {
                return "torn record at offset " + from + " (length " + length + " past the end of the file)";
            }
            ByteBuffer chunk = ByteBuffer.allocate(1 << 16);
            for (long at = from; at < fileSize; at += chunk.limit()) {
                chunk.clear();
                chunk.limit((int) Math.min(chunk.capacity(), fileSize - at));
                RecordScanner.readFully(channel, chunk, at);
                for (int i = 0; i < chunk.limit(); i++) {
                    if (chunk.get(i) != 0) {
                        return null;
                    }
                }
            }
            return "torn record at offset " + from + " (" + remaining + " zero bytes to the end of the file)";
        }
    }

    /** The highest sequence number this segment accounts for: its last entry's, or one below its name's. */
    long lastSeq() {
        return entries.isEmpty() ? firstSeq - 1 : entries.get(entries.size() - 1).seq();
    }

    /**
     * A sequence number no entry this segment ever held can exceed: {@link #lastSeq}, plus, after a damaged tail, as
     * many entries as its bytes could have held. Numbering new entries above it never reuses a number that a lost
     * entry (or its dead letter) had.
     */
    long seqBound() {
        long bound = lastSeq();
        if (!regions.isEmpty()) {
            Region last = regions.get(regions.size() - 1);
            if (!last.torn() && last.offset() + last.length() >= endOfLastEntry()) {
                bound += last.length() / RecordCodec.MIN_ENTRY_BYTES + 1;
            }
        }
        return bound;
    }

    private long endOfLastEntry() {
        if (entries.isEmpty()) {
            return 0;
        }
        EntryLocation last = entries.get(entries.size() - 1);
        return last.offset() + last.size();
    }

    /** The regions that are damage, not a torn tail. */
    List<Region> damaged() {
        return regions.stream().filter(r -> !r.torn()).toList();
    }

    /** The torn tail, if the segment has one. */
    List<Region> tornTails() {
        return regions.stream().filter(Region::torn).toList();
    }

    /** The segment files of a spool directory, oldest first. */
    static List<Path> segmentsIn(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> SpoolFiles.firstSeqOf(f) >= 0).sorted().toList();
        }
    }

    /**
     * The credentials a segment's entries refer to, by reference number. A bad record is skipped (reading resumes at
     * the next whole one); an entry whose credential is lost with it fails when read and is quarantined then.
     */
    static Map<Integer, Credential> credentialsOf(Path dir, long firstSeq) throws IOException {
        return scanCredentials(dir, firstSeq).credentials();
    }

    /**
     * What a segment's credential file holds: its whole credential records, and the regions that hold none (a torn
     * tail: a record a crash cut short before the entries that would refer to it were written; or damage).
     */
    record Credentials(Map<Integer, Credential> credentials, List<Region> regions) {
    }

    static Credentials scanCredentials(Path dir, long firstSeq) throws IOException {
        Path file = SpoolFiles.credentials(dir, firstSeq);
        Map<Integer, Credential> credentials = new HashMap<>();
        List<Region> regions = new ArrayList<>();
        try (RecordScanner scanner = new RecordScanner(file, RecordCodec.CREDENTIAL_MAGIC)) {
            long badFrom = -1;
            String reason = null;
            while (true) {
                long at = scanner.position();
                try {
                    RecordScanner.Record r = scanner.next();
                    if (r == null) {
                        break;
                    }
                    RecordCodec.DecodedCredential decoded = RecordCodec.decodeCredential(r.payload());
                    credentials.put(decoded.ref(), decoded.credential());
                    if (badFrom >= 0) {
                        regions.add(new Region(badFrom, at - badFrom, false, reason));
                        badFrom = -1;
                    }
                } catch (CorruptRecordException e) {
                    if (badFrom < 0) {
                        badFrom = at;
                        reason = e.getMessage();
                    }
                    scanner.seek(at);
                    scanner.resync();
                }
            }
            if (badFrom >= 0) {
                String tornShape = tornShape(file, RecordCodec.CREDENTIAL_MAGIC, badFrom, scanner.fileSize());
                regions.add(new Region(badFrom, scanner.fileSize() - badFrom, tornShape != null,
                        tornShape != null ? tornShape : reason));
            }
        } catch (NoSuchFileException e) {
            // No entry of the segment carried a credential.
        }
        return new Credentials(credentials, regions);
    }
}
