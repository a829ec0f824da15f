package dev.mcpd.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What one segment holds, read from disk: its whole entries, in order, and where reading stopped if a record was
 * torn or damaged. Bytes past the first bad record are never read as entries: a crash during a batch can only tear
 * the end of the segment that was being written, and no entry there was ever answered.
 *
 * @param segment    the segment file
 * @param firstSeq   the first sequence number its name allows
 * @param entries    its whole entries, in file order (sequence numbers ascending)
 * @param validBytes bytes from the start up to the end of the last whole entry
 * @param damage     why reading stopped before the end of the file, if it did
 */
record SegmentScan(Path segment, long firstSeq, List<SegmentWriter.Written> entries, long validBytes,
                   Optional<String> damage) {

    static SegmentScan of(Path segment) throws IOException {
        long firstSeq = SpoolFiles.firstSeqOf(segment);
        List<SegmentWriter.Written> entries = new ArrayList<>();
        try (RecordScanner scanner = new RecordScanner(segment, RecordCodec.ENTRY_MAGIC)) {
            while (true) {
                RecordScanner.Record record;
                try {
                    record = scanner.next();
                    if (record == null) {
                        return new SegmentScan(segment, firstSeq, entries, scanner.position(), Optional.empty());
                    }
                    long[] seqAndTime = RecordCodec.peekSeqAndReceivedAt(record.payload());
                    entries.add(new SegmentWriter.Written(seqAndTime[0], record.offset(), record.size(),
                            seqAndTime[1]));
                } catch (CorruptRecordException e) {
                    String damage = e.getMessage() + "; " + (scanner.fileSize() - scanner.position())
                            + " bytes after it not read";
                    return new SegmentScan(segment, firstSeq, entries, scanner.position(), Optional.of(damage));
                }
            }
        }
    }

    /** The highest sequence number this segment accounts for: its last entry's, or one below its name's. */
    long lastSeq() {
        return entries.isEmpty() ? firstSeq - 1 : entries.get(entries.size() - 1).seq();
    }

    /** The segment files of a spool directory, oldest first. */
    static List<Path> segmentsIn(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> SpoolFiles.firstSeqOf(f) >= 0).sorted().toList();
        }
    }

    /** The credentials a segment's entries refer to, by reference number. */
    static Map<Integer, Credential> credentialsOf(Path dir, long firstSeq) throws IOException {
        Path file = SpoolFiles.credentials(dir, firstSeq);
        Map<Integer, Credential> credentials = new HashMap<>();
        if (!Files.exists(file)) {
            return credentials;
        }
        try (RecordScanner scanner = new RecordScanner(file, RecordCodec.CREDENTIAL_MAGIC)) {
            for (RecordScanner.Record r = scanner.next(); r != null; r = scanner.next()) {
                RecordCodec.DecodedCredential decoded = RecordCodec.decodeCredential(r.payload());
                credentials.put(decoded.ref(), decoded.credential());
            }
        } catch (CorruptRecordException e) {
            // A torn credential record belongs to a batch that never committed: no whole entry refers to it.
        }
        return credentials;
    }
}
