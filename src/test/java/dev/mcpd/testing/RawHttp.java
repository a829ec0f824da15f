package dev.mcpd.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** A bare socket for what HTTP clients will not do on purpose: lie about lengths, send slowly, stop half-way. */
public final class RawHttp implements AutoCloseable {

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    public RawHttp(int port, int readTimeoutMillis) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(readTimeoutMillis);
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    public RawHttp send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    /** Reads the head and a body of its Content-Length, or until the server closes or the read times out. */
    public String readResponse() throws IOException {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                received.write(buffer, 0, n);
                if (complete(received.toString(StandardCharsets.ISO_8859_1))) {
                    break;
                }
            }
        } catch (SocketTimeoutException e) {
            // what came so far is the answer
        }
        return received.toString(StandardCharsets.ISO_8859_1);
    }

    /** Reads up to the end of one head ({@code \r\n\r\n}), e.g. a {@code 100 Continue}; less on EOF or timeout. */
    public String readHead() throws IOException {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        try {
            for (int b = in.read(); b >= 0; b = in.read()) {
                received.write(b);
                if (received.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                    break;
                }
            }
        } catch (SocketTimeoutException e) {
            // what came so far
        }
        return received.toString(StandardCharsets.ISO_8859_1);
    }

    private static boolean complete(String response) {
        int headEnd = response.indexOf("\r\n\r\n");
        if (headEnd < 0) {
            return false;
        }
        String head = response.substring(0, headEnd).toLowerCase();
        int at = head.indexOf("content-length:");
        if (at < 0) {
            return false;
        }
        int lineEnd = head.indexOf("\r\n", at);
        int length = Integer.parseInt(head.substring(at + 15, lineEnd < 0 ? head.length() : lineEnd).trim());
        return response.length() - headEnd - 4 >= length;
    }

    /** Closes the sending side: the server sees the end of the stream, and can still answer. */
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /**
     * True when the server closed the connection (after its answer) within the read timeout; false when it is still
     * open then, or sent more.
     */
    public boolean closedByServer() {
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset by the server
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
