import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolReceipt;
import dev.mcpd.spool.SpoolRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Fills a relay's spool with N distinct 1 KiB native batches through the spool's own append path (group commit), so
 * that the backlog benchmark starts from a million waiting entries in seconds rather than minutes of HTTP.
 *
 * <p>Usage: {@code java -cp target/mcpd.jar bench/FillSpool.java SPOOL_DIR/relay N [KEY_PREFIX [OTLP_BODY_FILE]]} (the
 * relay must be stopped); the entries' idempotency keys are KEY_PREFIX-0 … (default {@code backlog}). With
 * OTLP_BODY_FILE, every entry is that trace export, {@code POST /v1/traces} (JSON when the file's name ends in
 * {@code .json}, else protobuf).
 */
public final class FillSpool {

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long count = Long.parseLong(args[1]);
        String prefix = args.length > 2 ? args[2] : "backlog";
        String padding = "x".repeat(960);
        byte[] otlp = args.length > 3 ? java.nio.file.Files.readAllBytes(Path.of(args[3])) : null;
        long started = System.nanoTime();
        try (Spool spool = Spool.open(dir, Spool.Options.unbounded())) {
            List<CompletableFuture<SpoolReceipt>> inFlight = new ArrayList<>();
            for (long i = 0; i < count; i++) {
                byte[] body = otlp != null ? otlp : ("{\"events\":[{\"backlog\":" + i + ",\"pad\":\"" + padding
                        + "\"}]}").getBytes(StandardCharsets.UTF_8);
                inFlight.add(spool.append(new SpoolRequest("POST", otlp != null ? "/v1/traces" : "/v1/ingest",
                        otlp == null || args[3].endsWith(".json") ? "application/json" : "application/x-protobuf", "",
                        prefix + "-" + i,
                        Optional.empty(), System.currentTimeMillis(), body)));
                if (inFlight.size() == 4096) {
                    CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
                    inFlight.clear();
                }
            }
            CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
        }
        System.out.printf("{\"filled\":%d,\"seconds\":%.1f}%n", count, (System.nanoTime() - started) / 1e9);
    }
}
