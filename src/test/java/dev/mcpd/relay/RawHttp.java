package dev.mcpd.relay;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A bare socket for what HTTP clients won't do on purpose: lie about lengths, send slowly, stop half-way. */
final class RawHttp implements AutoCloseable {

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    RawHttp(int port, int readTimeoutMillis) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(readTimeoutMillis);
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    RawHttp send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    /** Reads until the server closes the connection or the read times out; returns what came. */
    String readResponse() throws IOException {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                received.write(buffer, 0, n);
                if (received.toString(StandardCharsets.ISO_8859_1).contains("\r\n\r\n")
                        && complete(received.toString(StandardCharsets.ISO_8859_1))) {
                    break;
                }
            }
        } catch (java.net.SocketTimeoutException e) {
            // what came so far is the answer
        }
        return received.toString(StandardCharsets.ISO_8859_1);
    }

    /** True once the head and a body of the announced Content-Length are in. */
    private static boolean complete(String response) {
        int headEnd = response.indexOf("\r\n\r\n");
        String head = response.substring(0, headEnd).toLowerCase();
        int at = head.indexOf("content-length:");
        if (at < 0) {
            return false;
        }
        int lineEnd = head.indexOf("\r\n", at);
        int length = Integer.parseInt(head.substring(at + 15, lineEnd < 0 ? head.length() : lineEnd).trim());
        return response.length() - headEnd - 4 >= length;
    }

    boolean closedByServer() throws IOException {
        try {
            return in.read() < 0;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
