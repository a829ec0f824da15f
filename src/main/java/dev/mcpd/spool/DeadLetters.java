package dev.mcpd.spool;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Entries an upstream refused for good (SPEC §3), kept in {@code <spool-dir>/relay/dead/} so an operator can see why
 * and send them again once the cause is fixed. Per entry, named by its sequence number:
 *
 * <pre>
 *   00000000000000000042.entry   the entry, in the spool's record format (mode 0600)
 *   00000000000000000042.cred    its sender credential, if it carried one (mode 0600)
 *   00000000000000000042.json    why: upstream, status (0 if it was never sent), time, reason, the first KiB of the
 *                                answer, and the entry's metadata
 * </pre>
 *
 * Each file is written under a temporary name, forced, renamed, and the directory forced, before the entry leaves
 * the spool: a crash in between leaves the entry in the spool, and writing it again replaces the same files.
 */
public final class DeadLetters {

    /** Why an entry is here. */
    public record Refusal(String upstream, int status, Instant at, String reason, byte[] answerHead) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final AtomicLong count = new AtomicLong();
    private final AtomicLong keptSinceStart = new AtomicLong();
    /** The sequence numbers of the entries held, for the barrier's {@code deadLettered} count. */
    private final ConcurrentSkipListSet<Long> seqs = new ConcurrentSkipListSet<>();

    public DeadLetters(Path relaySpoolDir) throws IOException {
        this.dir = relaySpoolDir.resolve("dead");
        SpoolFiles.createDirectory(dir);
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                if (name.startsWith(".") && name.endsWith(".tmp")) {
                    Files.delete(file); // a write a crash interrupted; its entry is still in the spool
                } else if (name.endsWith(".entry")) {
                    count.incrementAndGet();
                    seqOf(name).ifPresent(seqs::add);
                }
            }
        }
    }

    public Path directory() {
        return dir;
    }

    /** Entries held in dead/. */
    public long count() {
        return count.get();
    }

    /** Entries moved to dead/ since this process started. */
    public long keptSinceStart() {
        return keptSinceStart.get();
    }

    /** Keeps the entry and why it was refused; returns once all of it is durable. */
    public void keep(SpoolEntry entry, Refusal refusal) throws IOException {
        String base = SpoolFiles.baseName(entry.seq());
        boolean replacing = Files.exists(dir.resolve(base + ".entry"));
        SpoolRequest request = entry.request();
        int credentialRef = request.credential().isPresent() ? 1 : 0;
        if (request.credential().isPresent()) {
            writeDurably(base + ".cred", List.of(RecordCodec.encodeCredential(1, request.credential().get())));
        }
        writeDurably(base + ".entry",
                List.of(RecordCodec.encodeEntry(entry.seq(), request, credentialRef).buffers()));
        writeDurably(base + ".json", List.of(ByteBuffer.wrap(describe(entry, refusal))));
        SpoolFiles.forceDirectory(dir);
        if (!replacing) {
            count.incrementAndGet();
        }
        seqs.add(entry.seq());
        keptSinceStart.incrementAndGet();
    }

    /** Entries held in dead/ whose sequence number is at most {@code seq}. */
    public long countThrough(long seq) {
        return seqs.headSet(seq, true).size();
    }

    private static OptionalLong seqOf(String entryFileName) {
        try {
            return OptionalLong.of(Long.parseLong(entryFileName.substring(0,
                    entryFileName.length() - ".entry".length())));
        } catch (NumberFormatException e) {
            return OptionalLong.empty(); // not one of ours
        }
    }

    private byte[] describe(SpoolEntry entry, Refusal refusal) throws IOException {
        SpoolRequest request = entry.request();
        ObjectNode json = JSON.createObjectNode();
        json.put("seq", entry.seq());
        json.put("upstream", refusal.upstream());
        json.put("status", refusal.status());
        json.put("refusedAt", refusal.at().toString());
        json.put("reason", refusal.reason());
        json.put("answer", new String(refusal.answerHead(), StandardCharsets.UTF_8));
        json.put("method", request.method());
        json.put("target", request.target());
        json.put("contentType", request.contentType());
        json.put("contentEncoding", request.contentEncoding());
        json.put("idempotencyKey", request.idempotencyKey());
        json.put("receivedAt", Instant.ofEpochMilli(request.receivedAtMillis()).toString());
        json.put("bodyBytes", request.body().length);
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(json);
    }

    private void writeDurably(String name, List<ByteBuffer> content) throws IOException {
        Path temporary = dir.resolve("." + name + ".tmp");
        Files.deleteIfExists(temporary);
        try (FileChannel channel = SpoolFiles.createOwnerOnly(temporary)) {
            for (ByteBuffer buffer : content) {
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            }
            channel.force(false);
        }
        Files.move(temporary, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The entries in dead/, oldest first (for inspection and tests). */
    public List<SpoolEntry> entries() throws IOException {
        List<SpoolEntry> entries = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.filter(f -> f.getFileName().toString().endsWith(".entry")).sorted().toList();
        }
        for (Path file : files) {
            String base = file.getFileName().toString().replace(".entry", "");
            Path credentialFile = dir.resolve(base + ".cred");
            try (FileChannel channel = FileChannel.open(file)) {
                entries.add(SpoolReader.readEntry(channel, 0, (int) channel.size(), ref -> {
                    if (!Files.exists(credentialFile)) {
                        return null;
                    }
                    try (RecordScanner scanner = new RecordScanner(credentialFile, RecordCodec.CREDENTIAL_MAGIC)) {
                        return RecordCodec.decodeCredential(scanner.next().payload()).credential();
                    } catch (CorruptRecordException e) {
                        return null;
                    }
                }));
            } catch (CorruptRecordException e) {
                throw new IOException("dead letter " + file + " is damaged: " + e.getMessage(), e);
            }
        }
        return entries;
    }
}
