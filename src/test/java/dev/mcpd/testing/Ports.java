package dev.mcpd.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** Free loopback ports for the servers a test starts. */
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
