package dev.mcpd.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersEncoder;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * HTTP/2 (h2c, prior knowledge) at the frame level, for what clients refuse to send: header values with CR, LF or
 * NUL, a stream reset right after its headers, streams that never send their body. Frames are written by hand (RFC
 * 9113 section 4.1); header blocks are HPACK-encoded and decoded by Netty's codec with validation off.
 */
public final class RawHttp2 implements AutoCloseable {

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int DATA = 0;
    private static final int HEADERS = 1;
    private static final int RST_STREAM = 3;
    private static final int SETTINGS = 4;
    private static final int PING = 6;
    private static final int GOAWAY = 7;
    private static final int FLAG_END_STREAM = 1;
    private static final int FLAG_END_HEADERS = 4;
    private static final int FLAG_ACK = 1;

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private final DefaultHttp2HeadersEncoder encoder = new DefaultHttp2HeadersEncoder(
            Http2HeadersEncoder.NEVER_SENSITIVE, true);
    private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false);
    private final int port;
    private int nextStream = 1;

    public RawHttp2(int port, int readTimeoutMillis) throws IOException {
        this(port, readTimeoutMillis, new byte[0]);
    }

    private RawHttp2(int port, int readTimeoutMillis, byte[] settings) throws IOException {
        this.port = port;
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(readTimeoutMillis);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        out.write(PREFACE);
        frame(SETTINGS, 0, 0, settings);
    }

    /**
     * A client whose streams' flow-control windows start at 0 ({@code SETTINGS_INITIAL_WINDOW_SIZE} 0) and are never
     * opened: the server may send its answers' headers, never a byte of their bodies.
     */
    public static RawHttp2 neverOpeningItsWindows(int port, int readTimeoutMillis) throws IOException {
        byte[] initialWindowZero = {0, 4, 0, 0, 0, 0};
        return new RawHttp2(port, readTimeoutMillis, initialWindowZero);
    }

    /**
     * Reads (and drops) frames until the server ends the connection — a GOAWAY or the socket closed — or until
     * {@code millis} pass: whether it ended it.
     */
    public boolean endedByServerWithin(long millis) throws IOException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < deadline) {
            socket.setSoTimeout((int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            try {
                int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
                int type = in.readUnsignedByte();
                in.readUnsignedByte();
                in.readInt();
                in.skipNBytes(length);
                if (type == GOAWAY) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (EOFException | SocketException e) {
                return true;
            }
        }
        return false;
    }

    /** What the server answered on one stream: its header block(s), merged (trailers included). */
    public record Answer(Map<String, String> headers, byte[] body, boolean reset) {
        public int status() {
            return headers.containsKey(":status") ? Integer.parseInt(headers.get(":status")) : -1;
        }
    }

    /** Opens a stream with these headers (besides the pseudo-headers of a POST to {@code path}); returns its id. */
    public int headers(String path, Map<String, String> headers, boolean endStream) throws IOException {
        int stream = nextStream;
        nextStream += 2;
        Http2Headers block = new DefaultHttp2Headers(false).method("POST").scheme("http").path(path)
                .authority("127.0.0.1:" + port);
        headers.forEach(block::add);
        ByteBuf encoded = Unpooled.buffer();
        try {
            encoder.encodeHeaders(stream, block, encoded);
            byte[] bytes = new byte[encoded.readableBytes()];
            encoded.readBytes(bytes);
            frame(HEADERS, FLAG_END_HEADERS | (endStream ? FLAG_END_STREAM : 0), stream, bytes);
        } catch (Http2Exception e) {
            throw new IOException(e);
        } finally {
            encoded.release();
        }
        return stream;
    }

    public void data(int stream, byte[] bytes, boolean endStream) throws IOException {
        frame(DATA, endStream ? FLAG_END_STREAM : 0, stream, bytes);
    }

    /** RST_STREAM with CANCEL: the sender gives the stream up. */
    public void reset(int stream) throws IOException {
        frame(RST_STREAM, 0, stream, new byte[] {0, 0, 0, 8});
    }

    /** A whole POST: headers, then the body in one DATA frame; waits for the answer on that stream. */
    public Answer post(String path, Map<String, String> headers, byte[] body) throws IOException {
        int stream = headers(path, headers, body.length == 0);
        if (body.length > 0) {
            data(stream, body, true);
        }
        return answer(stream);
    }

    /** Reads frames until {@code stream} ends (its END_STREAM, or a reset), acknowledging SETTINGS and PINGs. */
    public Answer answer(int stream) throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
            int type = in.readUnsignedByte();
            int flags = in.readUnsignedByte();
            int id = in.readInt() & 0x7fffffff;
            byte[] payload = new byte[length];
            in.readFully(payload);
            if (type == SETTINGS && (flags & FLAG_ACK) == 0) {
                frame(SETTINGS, FLAG_ACK, 0, new byte[0]);
            } else if (type == PING && (flags & FLAG_ACK) == 0) {
                frame(PING, FLAG_ACK, 0, payload);
            } else if (type == GOAWAY) {
                throw new EOFException("GOAWAY from the server");
            } else if (type == HEADERS) {
                Http2Headers decoded;
                int from = 0;
                int to = payload.length;
                if ((flags & 0x8) != 0) { // PADDED: a pad length first, the padding last
                    to -= payload[0] & 0xff;
                    from = 1;
                }
                if ((flags & 0x20) != 0) { // PRIORITY: a stream dependency and a weight first
                    from += 5;
                }
                try { // every block is decoded, whatever its stream: HPACK's table is the connection's
                    decoded = decoder.decodeHeaders(id, Unpooled.wrappedBuffer(payload, from, to - from));
                } catch (Http2Exception e) {
                    throw new IOException(e);
                }
                if (id != stream) {
                    continue;
                }
                decoded.forEach(h -> headers.put(h.getKey().toString(), h.getValue().toString()));
                if ((flags & FLAG_END_STREAM) != 0) {
                    return new Answer(headers, body.toByteArray(), false);
                }
            } else if (id == stream && type == DATA) {
                body.write(payload);
                if ((flags & FLAG_END_STREAM) != 0) {
                    return new Answer(headers, body.toByteArray(), false);
                }
            } else if (id == stream && type == RST_STREAM) {
                return new Answer(headers, body.toByteArray(), true);
            }
        }
    }

    private void frame(int type, int flags, int stream, byte[] payload) throws IOException {
        byte[] header = {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8), (byte) payload.length,
                (byte) type, (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8),
                (byte) stream};
        out.write(header);
        out.write(payload);
        out.flush();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
