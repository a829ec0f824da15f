package dev.mcpd.relay;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.GrpcClient;
import dev.mcpd.testing.SharedServer;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One relay for all the tests of a class: {@code @RegisterExtension static final SharedRelay relay = new
 * SharedRelay(Map.of(...))} starts it (in a fresh folder) before the first test and stops it after the last.
 */
final class SharedRelay extends SharedServer<RunningRelay> {

    private GrpcClient grpc;

    SharedRelay(Map<String, String> environment) {
        super("relay", dir -> RunningRelay.start(dir, environment));
    }

    SharedRelay() {
        this(Map.of());
    }

    URI uri(String pathAndQuery) {
        return running().uri(pathAndQuery);
    }

    int port() {
        return running().port();
    }

    Path spoolDir() {
        return running().spoolDir();
    }

    List<SpoolEntry> spooled() {
        return running().spooled();
    }

    /** A byte-level gRPC client to this relay, made on first use and closed with the relay. */
    synchronized GrpcClient grpc() {
        if (grpc == null) {
            grpc = new GrpcClient(port());
        }
        return grpc;
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        synchronized (this) {
            if (grpc != null) {
                grpc.close();
                grpc = null;
            }
        }
        super.afterAll(context);
    }
}
