package dev.mcpd.it.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a loopback port in front of a collector, that a test takes {@link #down()} — the listening socket
 * closes (new connections are refused) and every open connection is reset mid-flight (an answer being sent is lost)
 * — and brings {@link #up()} again on the same port: a collector whose network flaps, faster than a JVM restarts.
 * With a one-way delay, every chunk is passed on that long after it arrived, in each direction, without holding back
 * the chunks behind it: a collector a long round trip away (this kernel has no netem).
 */
final class TcpProxy implements AutoCloseable {

    private final int port;
    private final int target;
    private final long delayNanos;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "tcp-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connections = new AtomicInteger();
    private ServerSocket listening;

    TcpProxy(int port, int target) {
        this(port, target, Duration.ZERO);
    }

    TcpProxy(int port, int target, Duration oneWayDelay) {
        this.port = port;
        this.target = target;
        this.delayNanos = oneWayDelay.toNanos();
    }

    int port() {
        return port;
    }

    synchronized TcpProxy up() throws IOException {
        if (listening != null) {
            return this;
        }
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
        listening = server;
        threads.execute(() -> accept(server));
        return this;
    }

    synchronized void down() {
        if (listening == null) {
            return;
        }
        try {
            listening.close();
        } catch (IOException ignored) {
            // closing
        }
        listening = null;
        for (Socket socket : open) {
            reset(socket);
        }
        open.clear();
    }

    int connections() {
        return connections.get();
    }

    private void accept(ServerSocket server) {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // taken down
            }
            connections.incrementAndGet();
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 2000);
            } catch (IOException e) {
                reset(client);
                continue;
            }
            open.add(client);
            open.add(upstream);
            synchronized (this) {
                if (listening != server) { // went down meanwhile
                    reset(client);
                    reset(upstream);
                    continue;
                }
            }
            threads.execute(() -> pump(client, upstream));
            threads.execute(() -> pump(upstream, client));
        }
    }

    private void pump(Socket from, Socket to) {
        if (delayNanos > 0) {
            pumpDelayed(from, to);
            return;
        }
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException ignored) {
            // reset or closed
        } finally {
            close(from);
            close(to);
        }
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    /** Reads as fast as the sender writes; a second thread writes each chunk once its delay is over. */
    private void pumpDelayed(Socket from, Socket to) {
        BlockingQueue<Chunk> line = new LinkedBlockingQueue<>();
        byte[] end = new byte[0];
        threads.execute(() -> {
            try {
                OutputStream out = to.getOutputStream();
                for (Chunk chunk = line.take(); chunk.bytes() != end; chunk = line.take()) {
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait); // the link's latency itself, not a synchronisation
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException ignored) {
                // reset, closed or shut down
            } finally {
                close(from);
                close(to);
            }
        });
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream()) {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                line.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
            }
        } catch (IOException ignored) {
            // reset or closed
        } finally {
            line.add(new Chunk(System.nanoTime() + delayNanos, end));
        }
    }

    private void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0); // RST, not FIN: the peer sees the connection reset
        } catch (IOException ignored) {
            // already closed
        }
        close(socket);
    }

    private void close(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        down();
        threads.shutdownNow();
    }
}
