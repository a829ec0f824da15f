package dev.mcpd.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a spool directory without changing it: the whole entries still waiting (delivered and dead-lettered ones,
 * which its acknowledgement logs name, are left out), and what is damaged. For inspection
 * (tests, {@code spool check}); it never creates, truncates or deletes a file.
 */
public final class SpoolReader {

    /**
     * Everything a spool directory holds.
     *
     * @param entries the whole entries still waiting, oldest first
     * @param damage  one line per segment whose reading stopped early
     */
    public record Contents(List<SpoolEntry> entries, List<String> damage) {
    }

    private SpoolReader() {
    }

    public static Contents read(Path dir) throws IOException {
        List<SpoolEntry> entries = new ArrayList<>();
        List<String> damage = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return new Contents(entries, damage);
        }
        for (Path segment : SegmentScan.segmentsIn(dir)) {
            SegmentScan scan = SegmentScan.of(segment);
            scan.damage().ifPresent(d -> damage.add(segment.getFileName() + ": " + d));
            Map<Integer, Credential> credentials = SegmentScan.credentialsOf(dir, scan.firstSeq());
            BitSet done = new BitSet();
            new AckLog(dir, scan.firstSeq()).readInto(done, seq -> indexOf(scan.entries(), seq));
            try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
                for (int i = 0; i < scan.entries().size(); i++) {
                    if (!done.get(i)) {
                        entries.add(readEntry(channel, scan.entries().get(i), credentials::get));
                    }
                }
            } catch (CorruptRecordException e) {
                damage.add(segment.getFileName() + ": " + e.getMessage());
            }
        }
        return new Contents(entries, damage);
    }

    /** Entries of a segment are in ascending seq order: a binary search finds one. */
    private static int indexOf(List<SegmentWriter.Written> entries, long seq) {
        int low = 0;
        int high = entries.size() - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            long found = entries.get(middle).seq();
            if (found == seq) {
                return middle;
            }
            if (found < seq) {
                low = middle + 1;
            } else {
                high = middle - 1;
            }
        }
        return -1;
    }

    /** Finds a credential by its reference in a segment's credential file; null when there is none. */
    @FunctionalInterface
    interface CredentialLookup {
        Credential find(int ref) throws IOException;
    }

    static SpoolEntry readEntry(FileChannel channel, SegmentWriter.Written location, CredentialLookup credentials)
            throws IOException, CorruptRecordException {
        return readEntry(channel, location.offset(), location.size(), credentials);
    }

    static SpoolEntry readEntry(FileChannel channel, long offset, int size, CredentialLookup credentials)
            throws IOException, CorruptRecordException {
        ByteBuffer payload = RecordScanner.readPayload(channel, offset, size, RecordCodec.ENTRY_MAGIC);
        RecordCodec.DecodedEntry decoded = RecordCodec.decodeEntry(payload);
        Optional<Credential> credential = Optional.empty();
        if (decoded.credentialRef() != 0) {
            Credential found = credentials.find(decoded.credentialRef());
            if (found == null) {
                throw new CorruptRecordException("entry " + decoded.seq() + " refers to credential "
                        + decoded.credentialRef() + ", which its segment's credential file lacks");
            }
            credential = Optional.of(found);
        }
        return decoded.toEntry(credential);
    }
}
