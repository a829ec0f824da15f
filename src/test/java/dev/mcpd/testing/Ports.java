package dev.mcpd.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/**
 * Free loopback ports, for what cannot listen on port 0 and say which port it bound: an address nothing may listen
 * on (a refused connection), a server that must be told its port before it starts and keep it across a restart (the
 * Kafka broker, the packaged jar, a collector restarted on the same address). An in-process relay or collector
 * listens on port 0 instead ({@link TestConfig}) and its {@code address()} names the port: no race for one.
 */
public final class Ports {

    private Ports() {
    }

    /** A port the kernel just handed out and took back: free now, almost surely still free a moment later. */
    public static int free() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
