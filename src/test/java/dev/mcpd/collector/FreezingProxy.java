package dev.mcpd.collector;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP proxy in front of a database server that a test can {@link #freeze()}: from then on no byte passes either way
 * and every connection stays open — what a client sees of a server stopped with SIGSTOP, or a network that drops
 * everything, without stopping the server other tests share.
 */
final class FreezingProxy implements AutoCloseable {

    private final ServerSocket listening;
    private final int target;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "freezing-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private volatile boolean frozen;

    FreezingProxy(int target) throws IOException {
        this.target = target;
        listening = new ServerSocket();
        listening.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        threads.execute(this::accept);
    }

    int port() {
        return listening.getLocalPort();
    }

    /** No byte passes any more, either way; connections stay open. */
    void freeze() {
        frozen = true;
    }

    private void accept() {
        while (!listening.isClosed()) {
            try {
                Socket client = listening.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                open.add(client);
                open.add(server);
                threads.execute(() -> pump(client, server));
                threads.execute(() -> pump(server, client));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                while (frozen) {
                    Thread.sleep(50); // held, never passed on: the test ends by closing the proxy
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException gone) {
            // a side closed, or the proxy did
        } finally {
            close(from);
            close(to);
        }
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closed already
        }
    }

    @Override
    public void close() throws IOException {
        listening.close();
        open.forEach(FreezingProxy::close);
        threads.shutdownNow();
    }
}
