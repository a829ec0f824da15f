package dev.mcpd.spool;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The spool's record format. Every record, in a segment or a credential file, is framed the same way:
 *
 * <pre>
 *   +--------+---------+---------+------------------------+
 *   | magic  | length  | crc32c  | payload (length bytes) |
 *   | u32    | u32     | u32     |                        |
 *   +--------+---------+---------+------------------------+
 * </pre>
 *
 * The CRC-32C covers the payload, so a torn or overwritten record is detected and never read as whole.
 * Integers are big-endian; a string is a u32 byte length followed by UTF-8 bytes.
 *
 * <p>Entry payload (magic {@code MCPR}): u8 version (1), u64 seq, u64 received-at (epoch ms),
 * u32 credential reference (0 = none), method, target, content type, content encoding, idempotency key,
 * u32 body length, body. The body comes last so it is written from the caller's array without a copy. Version 2, for
 * an entry that has forwarded headers or came as a Prometheus remote write, adds after the idempotency key a u8 of flags
 * (bit 0: it came with {@code X-Prometheus-Remote-Write-Version}) and a u32 count of forwarded headers, each a name and a value; an entry with neither is written as
 * version 1, so a spool without them stays readable by a relay that knows only version 1.
 *
 * <p>Credential payload (magic {@code MCPC}, only in mode-0600 {@code .cred} files): u8 version (1),
 * u32 reference, header name, header value.
 */
final class RecordCodec {

    static final int ENTRY_MAGIC = 0x4D435052;      // "MCPR"
    static final int CREDENTIAL_MAGIC = 0x4D435043; // "MCPC"
    static final int HEADER_BYTES = 12;
    static final byte VERSION = 1;
    /** Entries with forwarded headers or a remote write; every other record is {@link #VERSION}. */
    static final byte ENTRY_VERSION_WITH_HEADERS = 2;
    private static final byte REMOTE_WRITE = 1;
    /** Larger lengths are corruption, not records: no body the relay accepts comes near it. */
    static final int MAX_PAYLOAD_BYTES = Integer.MAX_VALUE - 64;

    private RecordCodec() {
    }

    /** An entry ready to be written: its buffers (header, metadata, body) and their total size. */
    record EncodedEntry(ByteBuffer[] buffers, int size) {
    }

    /** The framed size of an entry with an empty body and empty strings: what any entry costs at least. */
    static final int MIN_ENTRY_BYTES = HEADER_BYTES + 1 + 8 + 8 + 4 + 4 * 5 + 4;

    /** The framed size {@link #encodeEntry} will give this request, computed without encoding it. */
    static long entrySize(SpoolRequest request) {
        long size = MIN_ENTRY_BYTES + utf8Length(request.method()) + utf8Length(request.target())
                + utf8Length(request.contentType()) + utf8Length(request.contentEncoding())
                + utf8Length(request.idempotencyKey()) + (long) request.body().length;
        if (version(request) == ENTRY_VERSION_WITH_HEADERS) {
            size += 1 + 4;
            for (ForwardedHeader header : request.forwarded()) {
                size += 8 + utf8Length(header.name()) + utf8Length(header.value());
            }
        }
        return size;
    }

    private static byte version(SpoolRequest request) {
        return request.forwarded().isEmpty() && !request.remoteWrite() ? VERSION : ENTRY_VERSION_WITH_HEADERS;
    }

    private static int utf8Length(String s) {
        int length = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                length++;
            } else if (c < 0x800) {
                length += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                length += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                length++; // an unpaired surrogate is encoded as '?'
            } else {
                length += 3;
            }
        }
        return length;
    }

    static EncodedEntry encodeEntry(long seq, SpoolRequest request, int credentialRef) {
        byte[] method = utf8(request.method());
        byte[] target = utf8(request.target());
        byte[] contentType = utf8(request.contentType());
        byte[] contentEncoding = utf8(request.contentEncoding());
        byte[] key = utf8(request.idempotencyKey());
        byte version = version(request);
        byte[][] headers = new byte[request.forwarded().size() * 2][];
        int headerBytes = 0;
        for (int i = 0; i < request.forwarded().size(); i++) {
            headers[2 * i] = utf8(request.forwarded().get(i).name());
            headers[2 * i + 1] = utf8(request.forwarded().get(i).value());
            headerBytes += 8 + headers[2 * i].length + headers[2 * i + 1].length;
        }
        int metaSize = 1 + 8 + 8 + 4 + 4 * 5 + method.length + target.length + contentType.length
                + contentEncoding.length + key.length + 4 + (version == VERSION ? 0 : 1 + 4 + headerBytes);
        ByteBuffer meta = ByteBuffer.allocate(metaSize);
        meta.put(version).putLong(seq).putLong(request.receivedAtMillis()).putInt(credentialRef);
        putBytes(meta, method);
        putBytes(meta, target);
        putBytes(meta, contentType);
        putBytes(meta, contentEncoding);
        putBytes(meta, key);
        if (version == ENTRY_VERSION_WITH_HEADERS) {
            meta.put(request.remoteWrite() ? REMOTE_WRITE : 0).putInt(request.forwarded().size());
            for (byte[] field : headers) {
                putBytes(meta, field);
            }
        }
        meta.putInt(request.body().length);
        meta.flip();
        ByteBuffer body = ByteBuffer.wrap(request.body());
        CRC32C crc = new CRC32C();
        crc.update(meta.duplicate());
        crc.update(body.duplicate());
        long payloadSize = (long) metaSize + request.body().length;
        if (payloadSize > MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("request too large for one spool record: " + payloadSize + " bytes");
        }
        ByteBuffer header = header(ENTRY_MAGIC, (int) payloadSize, crc);
        return new EncodedEntry(new ByteBuffer[] {header, meta, body}, HEADER_BYTES + (int) payloadSize);
    }

    static ByteBuffer encodeCredential(int ref, Credential credential) {
        byte[] header = utf8(credential.header());
        byte[] value = utf8(credential.value());
        ByteBuffer payload = ByteBuffer.allocate(1 + 4 + 8 + header.length + value.length);
        payload.put(VERSION).putInt(ref);
        putBytes(payload, header);
        putBytes(payload, value);
        payload.flip();
        CRC32C crc = new CRC32C();
        crc.update(payload.duplicate());
        ByteBuffer record = ByteBuffer.allocate(HEADER_BYTES + payload.remaining());
        record.put(header(CREDENTIAL_MAGIC, payload.remaining(), crc)).put(payload).flip();
        return record;
    }

    /** A decoded entry payload; the credential is still a reference into the segment's credential file. */
    record DecodedEntry(long seq, int credentialRef, String method, String target, String contentType,
                        String contentEncoding, String idempotencyKey, long receivedAtMillis, byte[] body,
                        List<ForwardedHeader> forwarded, boolean remoteWrite) {

        SpoolEntry toEntry(Optional<Credential> credential) {
            return new SpoolEntry(seq, new SpoolRequest(method, target, contentType, contentEncoding,
                    idempotencyKey, credential, receivedAtMillis, body, forwarded, remoteWrite));
        }
    }

    static DecodedEntry decodeEntry(ByteBuffer payload) throws CorruptRecordException {
        try {
            byte version = checkEntryVersion(payload.get());
            long seq = payload.getLong();
            long receivedAt = payload.getLong();
            int credentialRef = payload.getInt();
            String method = getString(payload);
            String target = getString(payload);
            String contentType = getString(payload);
            String contentEncoding = getString(payload);
            String key = getString(payload);
            boolean remoteWrite = false;
            List<ForwardedHeader> forwarded = List.of();
            if (version == ENTRY_VERSION_WITH_HEADERS) {
                remoteWrite = (payload.get() & REMOTE_WRITE) != 0;
                int count = payload.getInt();
                if (count < 0 || count > payload.remaining() / 8) {
                    throw new CorruptRecordException("entry names " + count + " forwarded headers");
                }
                List<ForwardedHeader> headers = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    headers.add(new ForwardedHeader(getString(payload), getString(payload)));
                }
                forwarded = headers;
            }
            byte[] body = getBytes(payload);
            if (payload.hasRemaining()) {
                throw new CorruptRecordException("entry has " + payload.remaining() + " bytes past its body");
            }
            return new DecodedEntry(seq, credentialRef, method, target, contentType, contentEncoding, key,
                    receivedAt, body, forwarded, remoteWrite);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new CorruptRecordException("entry fields run past the record");
        }
    }

    /** Reads only the sequence number and receive time of an entry payload: all recovery needs. */
    static long[] peekSeqAndReceivedAt(ByteBuffer payload) throws CorruptRecordException {
        if (payload.remaining() < 17) {
            throw new CorruptRecordException("entry too short");
        }
        checkEntryVersion(payload.get(payload.position()));
        return new long[] {payload.getLong(payload.position() + 1), payload.getLong(payload.position() + 9)};
    }

    /**
     * The credential reference of the entry record at {@code offset} (its header, version, seq and receive time come
     * first), read without the rest of the record; for checks, on a record whose checksum was verified.
     */
    static int credentialRefAt(FileChannel channel, long offset) throws IOException {
        ByteBuffer ref = ByteBuffer.allocate(Integer.BYTES);
        RecordScanner.readFully(channel, ref, offset + HEADER_BYTES + 1 + 8 + 8);
        return ref.flip().getInt();
    }

    record DecodedCredential(int ref, Credential credential) {
    }

    static DecodedCredential decodeCredential(ByteBuffer payload) throws CorruptRecordException {
        try {
            checkVersion(payload.get());
            int ref = payload.getInt();
            return new DecodedCredential(ref, new Credential(getString(payload), getString(payload)));
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new CorruptRecordException("credential fields run past the record");
        }
    }

    static long crc(ByteBuffer payload) {
        CRC32C crc = new CRC32C();
        crc.update(payload.duplicate());
        return crc.getValue();
    }

    private static ByteBuffer header(int magic, int payloadSize, CRC32C crc) {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
        header.putInt(magic).putInt(payloadSize).putInt((int) crc.getValue()).flip();
        return header;
    }

    private static byte checkEntryVersion(byte version) throws CorruptRecordException {
        if (version != VERSION && version != ENTRY_VERSION_WITH_HEADERS) {
            throw new CorruptRecordException("unknown record version " + version);
        }
        return version;
    }

    private static void checkVersion(byte version) throws CorruptRecordException {
        if (version != VERSION) {
            throw new CorruptRecordException("unknown record version " + version);
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void putBytes(ByteBuffer buffer, byte[] bytes) {
        buffer.putInt(bytes.length).put(bytes);
    }

    private static String getString(ByteBuffer buffer) {
        return new String(getBytes(buffer), StandardCharsets.UTF_8);
    }

    private static byte[] getBytes(ByteBuffer buffer) {
        int length = buffer.getInt();
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalArgumentException("length " + length + " past the record");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }
}
