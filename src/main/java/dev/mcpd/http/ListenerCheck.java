package dev.mcpd.http;

import dev.mcpd.config.ListenAddress;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * Makes sure the process really listens where it says. platform-http's Vert.x server reports a failed bind only as an
 * unhandled exception on its event loop (with a stack trace) while Camel starts anyway; so the address is tried before
 * Camel starts, and a connection to it is made after.
 */
public final class ListenerCheck {

    private ListenerCheck() {
    }

    /** Fails with a one-line reason when the address cannot be bound now (in use, not permitted, unknown host). */
    public static void ensureFree(ListenAddress listen) throws IOException {
        if (listen.port() == 0) {
            return;
        }
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(listen.host(), listen.port()));
        } catch (IOException e) {
            throw new IOException("cannot listen on " + listen + ": " + e.getMessage(), e);
        }
    }

    /** Fails when Camel started but nothing accepts connections on the address. */
    public static void ensureListening(ListenAddress listen) throws IOException {
        if (listen.port() == 0) {
            return;
        }
        String host = isWildcard(listen.host()) ? "127.0.0.1" : listen.host();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, listen.port()), 2000);
        } catch (IOException e) {
            throw new IOException("cannot listen on " + listen + ": the HTTP server did not bind", e);
        }
    }

    private static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }
}
