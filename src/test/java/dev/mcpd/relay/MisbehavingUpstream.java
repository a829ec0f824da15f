package dev.mcpd.relay;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An upstream on a raw socket that misbehaves as a broken proxy or a wedged server does: the head of a 200 goes out
 * at once, and then its body never comes ({@link Ending#NEVER}), comes a byte at a time, each within any idle timeout
 * ({@link Ending#DRIP}), or is 1 GiB long ({@link Ending#HUGE}); or it names h2c and speaks HTTP/1.1 only, answering
 * the HTTP/2 preface with a 400 ({@link Ending#AT_ONCE_NAMING_H2C}). Health checks ({@code GET}) and deliveries
 * ({@code POST}) are told apart, so either can misbehave while the other answers well.
 */
final class MisbehavingUpstream implements AutoCloseable {

    /** How an answer's body ends. */
    enum Ending {
        /** At once: a 200 with an empty body. */
        AT_ONCE,
        /** Never: one byte of a 1 MiB body, then nothing while the connection stays open. */
        NEVER,
        /** A byte every 200 ms of a 1 000-byte body: a pause never long enough for an idle timeout. */
        DRIP,
        /**
         * As {@link #DRIP}, begun as soon as the request's head is read: its body is never read, so a large one is
         * never written whole.
         */
        DRIP_UNREAD,
        /** A 200 whose body is 1 GiB, sent as fast as it is read. */
        HUGE,
        /**
         * A 200 naming {@code h2c} in {@code Mcpd-Capabilities}, as an HTTP/1.1 reverse proxy passes an mcpd
         * collector's probe answer through; the proxy itself speaks HTTP/1.1 only.
         */
        AT_ONCE_NAMING_H2C
    }

    /** What an HTTP/1.1 server such as nginx answers to the HTTP/2 connection preface. */
    private static final String PREFACE_REFUSED = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
            + "Connection: close\r\n\r\n";
    private static final long ONE_GIB = 1L << 30;

    private static final Duration DRIP_PAUSE = Duration.ofMillis(200);

    private final ServerSocket server;
    private final Ending checks;
    private final Ending deliveries;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final AtomicInteger checksAsked = new AtomicInteger();
    private final AtomicInteger deliveriesAsked = new AtomicInteger();
    private final AtomicInteger prefacesRefused = new AtomicInteger();
    private volatile boolean closed;

    private MisbehavingUpstream(Ending checks, Ending deliveries) throws IOException {
        this.checks = checks;
        this.deliveries = deliveries;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "misbehaving-upstream");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    static MisbehavingUpstream start(Ending checks, Ending deliveries) {
        try {
            return new MisbehavingUpstream(checks, deliveries);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    int checksAsked() {
        return checksAsked.get();
    }

    int deliveriesAsked() {
        return deliveriesAsked.get();
    }

    /** Connections that opened with the HTTP/2 preface, answered 400 and closed. */
    int prefacesRefused() {
        return prefacesRefused.get();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket socket = server.accept();
                open.add(socket);
                Thread connection = new Thread(() -> serve(socket), "misbehaving-upstream-connection");
                connection.setDaemon(true);
                connection.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket socket) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            while (!closed) {
                String head = readHead(in);
                if (head == null) {
                    return;
                }
                if (head.startsWith("PRI * HTTP/2.0")) {
                    prefacesRefused.incrementAndGet();
                    out.write(PREFACE_REFUSED.getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    return;
                }
                boolean check = head.startsWith("GET ");
                Ending ending = check ? checks : deliveries;
                (check ? checksAsked : deliveriesAsked).incrementAndGet();
                if (ending == Ending.DRIP_UNREAD) {
                    answer(out, Ending.DRIP);
                    return;
                }
                in.readNBytes(contentLength(head));
                answer(out, ending);
            }
        } catch (IOException | InterruptedException e) {
            // the relay gave up on the connection, or the test is over
        }
    }

    private void answer(OutputStream out, Ending ending) throws IOException, InterruptedException {
        switch (ending) {
            case AT_ONCE -> {
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            case AT_ONCE_NAMING_H2C -> {
                out.write(("HTTP/1.1 200 OK\r\nMcpd-Capabilities: h2c\r\nContent-Length: 0\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            case HUGE -> {
                out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + ONE_GIB + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                byte[] chunk = new byte[64 * 1024];
                for (long sent = 0; sent < ONE_GIB && !closed; sent += chunk.length) {
                    out.write(chunk); // blocks while the relay does not read; fails once it closes
                }
                out.flush();
            }
            case NEVER -> {
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\nx".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                while (!closed) {
                    Thread.sleep(100); // holding the connection open, as the broken upstream does
                }
            }
            case DRIP, DRIP_UNREAD -> {
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                for (int i = 0; i < 1000 && !closed; i++) {
                    out.write('x');
                    out.flush();
                    Thread.sleep(DRIP_PAUSE.toMillis()); // the upstream's pace, not test synchronisation
                }
            }
        }
    }

    /** The request head up to its blank line, or null at the end of the stream. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            matched = (b == '\r' && matched % 2 == 0) || (b == '\n' && matched % 2 == 1) ? matched + 1
                    : b == '\r' ? 1 : 0;
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket socket : open) {
            socket.close();
        }
    }
}
