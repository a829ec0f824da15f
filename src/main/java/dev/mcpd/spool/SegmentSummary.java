package dev.mcpd.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * What a sealed segment holds, in a few dozen bytes: written beside it ({@code <segment>.sum}) when the spool stops
 * appending to it, so that a start does not read a segment delivery has not reached yet, and memory holds these
 * numbers, not an index of every entry, for each such segment. It is a cache of the segment, never the only copy of
 * anything: one that is missing, damaged (its checksum), or that disagrees with the segment's size is ignored, and the
 * segment is read whole instead.
 *
 * <p>Format: one record framed as {@link RecordCodec} frames every record (magic {@code MCPS}); payload u8 version (1),
 * u64 entry count, u64 first entry's seq, u64 last entry's seq, u64 stored bytes of all entries, u64 first entry's
 * receive time (epoch ms), u64 the segment file's size.
 *
 * @param count           whole entries in the segment
 * @param firstSeq        the first entry's sequence number
 * @param lastSeq         the last entry's sequence number
 * @param bytes           the entries' stored size, framing included (what the spool bound counts)
 * @param firstReceivedAt when the first entry was received, epoch milliseconds
 * @param fileSize        the size of the segment file it describes
 */
record SegmentSummary(long count, long firstSeq, long lastSeq, long bytes, long firstReceivedAt, long fileSize) {

    static final String SUFFIX = ".sum";
    static final int MAGIC = 0x4D435053; // "MCPS"
    private static final int PAYLOAD_BYTES = 1 + 6 * Long.BYTES;

    static Path file(Path dir, long segmentFirstSeq) {
        return dir.resolve(SpoolFiles.baseName(segmentFirstSeq) + SUFFIX);
    }

    /**
     * Writes it beside the segment: to a temporary name first, then renamed, so that a reader sees the whole record or
     * none. Not forced: one a crash loses or tears only makes the next start read the segment.
     */
    void write(Path dir, long segmentFirstSeq) throws IOException {
        ByteBuffer payload = ByteBuffer.allocate(PAYLOAD_BYTES);
        payload.put(RecordCodec.VERSION).putLong(count).putLong(firstSeq).putLong(lastSeq).putLong(bytes)
                .putLong(firstReceivedAt).putLong(fileSize).flip();
        ByteBuffer record = ByteBuffer.allocate(RecordCodec.HEADER_BYTES + PAYLOAD_BYTES);
        record.putInt(MAGIC).putInt(PAYLOAD_BYTES).putInt((int) RecordCodec.crc(payload)).put(payload).flip();
        Path target = file(dir, segmentFirstSeq);
        Path temporary = dir.resolve("." + target.getFileName() + ".tmp");
        Files.deleteIfExists(temporary);
        try (FileChannel channel = SpoolFiles.createOwnerOnly(temporary)) {
            while (record.hasRemaining()) {
                channel.write(record);
            }
        }
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * The summary of the segment, if there is one that can be trusted: whole, checked, and of the segment as it is
     * now (same size). Null otherwise.
     */
    static SegmentSummary read(Path dir, long segmentFirstSeq) throws IOException {
        byte[] all;
        try {
            all = Files.readAllBytes(file(dir, segmentFirstSeq));
        } catch (NoSuchFileException e) {
            return null;
        }
        ByteBuffer record = ByteBuffer.wrap(all);
        if (all.length != RecordCodec.HEADER_BYTES + PAYLOAD_BYTES || record.getInt() != MAGIC
                || record.getInt() != PAYLOAD_BYTES) {
            return null;
        }
        int crc = record.getInt();
        ByteBuffer payload = record.slice();
        if ((int) RecordCodec.crc(payload) != crc || payload.get() != RecordCodec.VERSION) {
            return null;
        }
        SegmentSummary summary = new SegmentSummary(payload.getLong(), payload.getLong(), payload.getLong(),
                payload.getLong(), payload.getLong(), payload.getLong());
        long size;
        try {
            size = Files.size(SpoolFiles.segment(dir, segmentFirstSeq));
        } catch (NoSuchFileException e) {
            return null;
        }
        return summary.count() > 0 && summary.fileSize() == size ? summary : null;
    }
}
