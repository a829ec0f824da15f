package dev.mcpd.spool;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Reads the framed records of one spool file in order, checking each one's magic, length and checksum. */
final class RecordScanner implements Closeable {

    /** One whole record: where it starts, its framed size and its payload. */
    record Record(long offset, int size, ByteBuffer payload) {
    }

    private final FileChannel channel;
    private final int magic;
    private final long fileSize;
    private long position;

    RecordScanner(Path file, int magic) throws IOException {
        this.channel = FileChannel.open(file, StandardOpenOption.READ);
        this.magic = magic;
        this.fileSize = channel.size();
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

    /** Where the next record would start: after a corrupt record, the offset of that record. */
    long position() {
        return position;
    }

    long fileSize() {
        return fileSize;
    }

    private void readFully(ByteBuffer buffer, long at) throws IOException {
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
