package dev.mcpd.spool;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Reads the framed records of one spool file in order, checking each one's magic, length and checksum. After a bad
 * record, {@link #resync} finds where the next whole record starts, so that one damaged record (bit rot, an
 * overwritten block) does not hide the whole records after it.
 */
final class RecordScanner implements Closeable {

    /** One whole record: where it starts, its framed size and its payload. */
    record Record(long offset, int size, ByteBuffer payload) {
    }

    /**
     * How much of the file one read brings in: a scan reads records in order, and two reads per record (header, then
     * payload) were two system calls per entry — most of the CPU a relay spent loading a segment when delivery
     * reached it (bench/profile.sh).
     */
    static final int WINDOW_BYTES = 256 * 1024;

    private final FileChannel channel;
    private final int magic;
    private final long fileSize;
    private long position;
    /** The bytes of the file from {@link #windowStart}, as last read; empty until the first read. */
    private final ByteBuffer window;
    private long windowStart;

    RecordScanner(Path file, int magic) throws IOException {
        this.channel = FileChannel.open(file, StandardOpenOption.READ);
        this.magic = magic;
        this.fileSize = channel.size();
        this.window = ByteBuffer.allocate((int) Math.min(WINDOW_BYTES, fileSize)).limit(0);
    }

    /**
     * The next record, or {@code null} at a clean end of file.
     *
     * @throws CorruptRecordException at a record that is torn, damaged or not one of ours; {@link #position()} then
     *                                still points at its start
     */
    Record next() throws IOException, CorruptRecordException {
        long remaining = fileSize - position;
        if (remaining == 0) {
            return null;
        }
        if (remaining < RecordCodec.HEADER_BYTES) {
            throw new CorruptRecordException("torn record header at offset " + position);
        }
        ByteBuffer header = ByteBuffer.allocate(RecordCodec.HEADER_BYTES);
        readFully(header, position);
        header.flip();
        int foundMagic = header.getInt();
        int length = header.getInt();
        int crc = header.getInt();
        if (foundMagic != magic) {
            throw new CorruptRecordException("no record at offset " + position + " (bad magic)");
        }
        if (length < 0 || length > remaining - RecordCodec.HEADER_BYTES) {
            throw new CorruptRecordException("torn record at offset " + position + " (length " + length
                    + " past the end of the file)");
        }
        ByteBuffer payload = ByteBuffer.allocate(length);
        readFully(payload, position + RecordCodec.HEADER_BYTES);
        payload.flip();
        if ((int) RecordCodec.crc(payload) != crc) {
            throw new CorruptRecordException("record at offset " + position + " fails its checksum");
        }
        Record record = new Record(position, RecordCodec.HEADER_BYTES + length, payload);
        position += record.size();
        return record;
    }

    /**
     * Moves past a bad record to the next offset, after the current position, where a whole record of ours starts:
     * this scanner's magic, a length that fits in the file, and a payload whose CRC-32C matches. At the end of the
     * file when there is none. Returns the new position; the bytes skipped are a damaged region (or a torn tail).
     *
     * <p>A random 4-byte match of the magic costs one checksum of at most the rest of the file; a false match of the
     * whole frame, checksum included, needs about 2<sup>-64</sup> luck or a body that itself holds a spool record,
     * which is why callers also check that a found entry's sequence number fits where it was found.
     */
    long resync() throws IOException {
        byte[] wanted = ByteBuffer.allocate(4).putInt(magic).array();
        ByteBuffer chunk = ByteBuffer.allocate(RESYNC_CHUNK_BYTES);
        long at = position + 1;
        while (at + RecordCodec.HEADER_BYTES <= fileSize) {
            chunk.clear();
            chunk.limit((int) Math.min(chunk.capacity(), fileSize - at));
            readFully(chunk, at);
            byte[] bytes = chunk.array();
            int length = chunk.limit();
            for (int i = 0; i + 4 <= length; i++) {
                if (bytes[i] == wanted[0] && bytes[i + 1] == wanted[1] && bytes[i + 2] == wanted[2]
                        && bytes[i + 3] == wanted[3] && wholeRecordAt(at + i)) {
                    position = at + i;
                    return position;
                }
            }
            at += length - 3; // the last three bytes again: a magic may straddle two chunks
        }
        position = fileSize;
        return position;
    }

    private static final int RESYNC_CHUNK_BYTES = 1 << 20;

    /** Whether a whole, checksummed record of ours starts at {@code offset}. */
    private boolean wholeRecordAt(long offset) throws IOException {
        long remaining = fileSize - offset;
        if (remaining < RecordCodec.HEADER_BYTES) {
            return false;
        }
        ByteBuffer header = ByteBuffer.allocate(RecordCodec.HEADER_BYTES);
        readFully(header, offset);
        header.flip();
        if (header.getInt() != magic) {
            return false;
        }
        int length = header.getInt();
        if (length < 0 || length > remaining - RecordCodec.HEADER_BYTES) {
            return false;
        }
        try {
            readPayload(channel, offset, RecordCodec.HEADER_BYTES + length, magic);
            return true;
        } catch (CorruptRecordException e) {
            return false;
        }
    }

    /** Moves to {@code offset}, e.g. back to the start of a record that checks but does not fit where it was found. */
    void seek(long offset) {
        position = offset;
    }

    /** Where the next record would start: after a corrupt record, the offset of that record. */
    long position() {
        return position;
    }

    long fileSize() {
        return fileSize;
    }

    /** Fills {@code buffer} from {@code at} through the window; EOFException when the file ends first. */
    private void readFully(ByteBuffer buffer, long at) throws IOException {
        int wanted = buffer.remaining();
        if (wanted > window.capacity()) {
            readFully(channel, buffer, at);
            return;
        }
        if (at < windowStart || at + wanted > windowStart + window.limit()) {
            fillWindow(at);
            if (wanted > window.limit()) {
                throw new EOFException("file ended while reading at offset " + (at + window.limit()));
            }
        }
        int from = (int) (at - windowStart);
        buffer.put(window.array(), from, wanted);
    }

    /** Reads the window from {@code at}: as much as it holds, never past the size the file had when opened. */
    private void fillWindow(long at) throws IOException {
        window.clear();
        window.limit((int) Math.max(0, Math.min(window.capacity(), fileSize - at)));
        windowStart = at;
        long offset = at;
        while (window.hasRemaining()) {
            int n = channel.read(window, offset);
            if (n < 0) {
                break;
            }
            offset += n;
        }
        window.flip();
    }

    /** Fills {@code buffer} from {@code at}; EOFException when the file ends first. */
    static void readFully(FileChannel channel, ByteBuffer buffer, long at) throws IOException {
        long offset = at;
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, offset);
            if (n < 0) {
                throw new EOFException("file ended while reading at offset " + offset);
            }
            offset += n;
        }
    }

    /** Reads one record of {@code size} bytes at {@code offset} of an open channel and checks it. */
    static ByteBuffer readPayload(FileChannel channel, long offset, int size, int magic)
            throws IOException, CorruptRecordException {
        ByteBuffer record = ByteBuffer.allocate(size);
        long at = offset;
        while (record.hasRemaining()) {
            int n = channel.read(record, at);
            if (n < 0) {
                throw new CorruptRecordException("record at offset " + offset + " runs past the end of the file");
            }
            at += n;
        }
        record.flip();
        if (record.getInt() != magic || record.getInt() != size - RecordCodec.HEADER_BYTES) {
            throw new CorruptRecordException("no record of " + size + " bytes at offset " + offset);
        }
        int crc = record.getInt();
        ByteBuffer payload = record.slice();
        if ((int) RecordCodec.crc(payload) != crc) {
            throw new CorruptRecordException("record at offset " + offset + " fails its checksum");
        }
        return payload;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
