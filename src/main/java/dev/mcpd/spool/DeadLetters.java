package dev.mcpd.spool;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpd.disk.DurableDirectories;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Entries an upstream refused for good, or that waited longer than {@code --spool-max-age}, kept in
 * {@code <spool-dir>/relay/dead/} so an operator can see why and send them again once the cause is fixed.
 * Per entry, named by its sequence number:
 *
 * <pre>
 *   00000000000000000042.entry   the entry, in the spool's record format (mode 0600)
 *   00000000000000000042.cred    its sender credential, if it carried one (mode 0600)
 *   00000000000000000042.json    why: upstream, status (0 if it was never sent), time, reason, the first KiB of the
 *                                answer, and the entry's metadata
 * </pre>
 *
 * Each file is written under a temporary name, forced and renamed, and the directory synced, before the entry leaves
 * the spool: a crash or power cut in between leaves the entry in the spool, and writing it again replaces the same
 * files. The {@code .entry} file is what makes a dead letter: it is renamed into place only once the names of its
 * credential and reason are durable, and removed (durably) first.
 *
 * <p>The CLI ({@code mcpd relay dead …}) changes dead/ while a relay runs, so what the relay reports of it (its
 * census) is read again from the directory at most once a second, not kept as a count of its own.
 */
public final class DeadLetters {

    /** Why an entry is here. */
    public record Refusal(String upstream, int status, Instant at, String reason, byte[] answerHead) {
    }

    /** What dead/ holds: entries, the bytes of their files, and when the oldest was kept. */
    public record Census(long count, long bytes, Optional<Instant> oldest) {
    }

    /** Where they are kept, in the relay's spool directory. */
    public static final String DIRECTORY = "dead";
    static final String ENTRY = ".entry";
    static final String CREDENTIAL = ".cred";
    static final String WHY = ".json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final AtomicLong keptSinceStart = new AtomicLong();
    private final DeadLetterCensus census;
    /** dead/ as it was opened: a refused entry and its credential are written only there. */
    private final DirectoryIdentity identity;

    /** The relay's dead letters: creates dead/ if needed and removes what a crash left half-written. */
    public DeadLetters(Path relaySpoolDir) throws IOException {
        this(relaySpoolDir, true);
    }

    private DeadLetters(Path relaySpoolDir, boolean owner) throws IOException {
        this.dir = relaySpoolDir.resolve(DIRECTORY);
        if (owner) {
            SpoolFiles.createDirectory(dir);
            removeHalfWritten();
        }
        this.identity = DirectoryIdentity.of(dir);
        this.census = new DeadLetterCensus(dir);
    }

    /**
     * Removes what a crash left: a file being written (its entry is still in the spool), and a credential or reason
     * whose {@code .entry} a purge or replay had removed already (the entry is gone, or in replay/).
     */
    private void removeHalfWritten() throws IOException {
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.toList();
        }
        for (Path file : files) {
            String name = file.getFileName().toString();
            if (name.startsWith(".") && name.endsWith(".tmp")) {
                Files.delete(file);
            } else if ((name.endsWith(CREDENTIAL) || name.endsWith(WHY)) && !name.startsWith(".")) {
                String base = name.substring(0, name.lastIndexOf('.'));
                if (!Files.exists(dir.resolve(base + ENTRY))) {
                    Files.delete(file);
                }
            }
        }
    }

    /**
     * The dead letters of a spool a relay may be running on, for the CLI: nothing is created or cleaned up (a file
     * half-written is the relay's to finish). Empty when the spool has no dead/.
     */
    public static Optional<DeadLetters> beside(Path relaySpoolDir) throws IOException {
        if (!Files.isDirectory(relaySpoolDir.resolve(DIRECTORY))) {
            return Optional.empty();
        }
        return Optional.of(new DeadLetters(relaySpoolDir, false));
    }

    public Path directory() {
        return dir;
    }

    /** Entries held in dead/. */
    public long count() {
        return census().count();
    }

    /** What dead/ holds now (at most a second old). */
    public Census census() {
        return census.now();
    }

    /**
     * What dead/ holds, without waiting for the directory: the last census, read again in the background when it is
     * over a second old. For callers that must not block (an event loop answering {@code /metrics} or
     * {@code /relay/status}).
     */
    public Census recentCensus() {
        return census.recent();
    }

    /** {@link #countBetween}, without waiting for the directory, as {@link #recentCensus()}. */
    public long recentCountBetween(long from, long seq) {
        return census.recentBetween(from, seq);
    }

    /** Entries moved to dead/ since this process started. */
    public long keptSinceStart() {
        return keptSinceStart.get();
    }

    /** Keeps the entry and why it was refused; returns once all of it is durable. */
    public void keep(SpoolEntry entry, Refusal refusal) throws IOException {
        identity.verify();
        String base = SpoolFiles.baseName(entry.seq());
        SpoolRequest request = entry.request();
        int credentialRef = request.credential().isPresent() ? 1 : 0;
        if (request.credential().isPresent()) {
            writeDurably(base + CREDENTIAL, List.of(RecordCodec.encodeCredential(1, request.credential().get())));
        }
        byte[] why = describe(entry, refusal);
        writeDurably(base + WHY, List.of(ByteBuffer.wrap(why)));
        // Their names durable before the entry's: a power cut never leaves a dead letter without its credential.
        DurableDirectories.sync(dir);
        writeDurably(base + ENTRY,
                List.of(RecordCodec.encodeEntry(entry.seq(), request, credentialRef).buffers()));
        DurableDirectories.sync(dir);
        keptSinceStart.incrementAndGet();
        census.kept(entry.seq(), Files.size(dir.resolve(base + ENTRY)) + why.length + (credentialRef == 1
                ? Files.size(dir.resolve(base + CREDENTIAL)) : 0));
    }

    /** Entries held in dead/ numbered {@code from} through {@code seq} (a job's entries; 1: all up to seq). */
    public long countBetween(long from, long seq) {
        return census.between(from, seq);
    }

    /** The dead letters, oldest (lowest sequence number) first. */
    public List<DeadLetter> list() throws IOException {
        List<DeadLetter> letters = new ArrayList<>();
        for (long seq : seqsOnDisk()) {
            find(seq).ifPresent(letters::add);
        }
        return letters;
    }

    /** The dead letter {@code seq}, if dead/ holds it. */
    public Optional<DeadLetter> find(long seq) throws IOException {
        Path entryFile = file(seq, ENTRY);
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(entryFile, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        JsonNode why;
        try {
            why = JSON.readTree(Files.readAllBytes(file(seq, WHY)));
        } catch (NoSuchFileException e) {
            why = JSON.createObjectNode(); // kept by a crash between its .entry and its .json: the entry says the rest
        }
        Instant refusedAt = instant(why.path("refusedAt").asText(""), attributes.lastModifiedTime().toInstant());
        String upstream = why.path("upstream").asText("");
        int status = why.path("status").asInt(0);
        String reason = why.path("reason").asText("(why was not recorded)");
        String answer = why.path("answer").asText("");
        Optional<SpoolEntry> entry;
        try {
            entry = entry(seq);
        } catch (Damaged e) {
            // Shown as damaged, and the others are listed all the same.
            return Optional.of(new DeadLetter(seq, refusedAt, upstream, status, reason, answer, "", "", "", "", "",
                    refusedAt, attributes.size(), false, Optional.of(e.getMessage())));
        }
        if (entry.isEmpty()) {
            return Optional.empty();
        }
        SpoolRequest request = entry.get().request();
        return Optional.of(new DeadLetter(seq, refusedAt, upstream, status, reason, answer,
                request.method(), request.target(), request.contentType(), request.contentEncoding(),
                request.idempotencyKey(), Instant.ofEpochMilli(request.receivedAtMillis()), request.body().length,
                request.credential().isPresent(), Optional.empty()));
    }

    /** The size of dead letter {@code seq}'s entry file, as the spool would store it; empty if dead/ lacks it. */
    public OptionalLong entryBytes(long seq) throws IOException {
        try {
            return OptionalLong.of(Files.size(file(seq, ENTRY)));
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        }
    }

    /** The stored entry {@code seq} — body and credential included — if dead/ holds it. */
    public Optional<SpoolEntry> entry(long seq) throws IOException {
        return readEntry(dir, SpoolFiles.baseName(seq));
    }

    /**
     * Deletes the dead letter {@code seq}: its {@code .entry} first, so that a crash part way leaves no dead letter
     * without its credential. False when dead/ does not hold it.
     */
    public boolean purge(long seq) throws IOException {
        boolean held = Files.deleteIfExists(file(seq, ENTRY));
        if (held) {
            DurableDirectories.sync(dir); // gone for good before its credential goes (a start removes what is left)
        }
        Files.deleteIfExists(file(seq, WHY));
        Files.deleteIfExists(file(seq, CREDENTIAL));
        if (held) {
            census.purged(seq);
        }
        return held;
    }

    /** The entries in dead/, oldest first (for inspection and tests). */
    public List<SpoolEntry> entries() throws IOException {
        List<SpoolEntry> entries = new ArrayList<>();
        for (long seq : seqsOnDisk()) {
            entry(seq).ifPresent(entries::add);
        }
        return entries;
    }

    /** The sequence numbers of the dead letters on disk now, in order. */
    public List<Long> seqsOnDisk() throws IOException {
        try (Stream<Path> listing = Files.list(dir)) {
            return listing.map(f -> seqOf(f.getFileName().toString())).filter(OptionalLong::isPresent)
                    .map(OptionalLong::getAsLong).sorted().toList();
        }
    }

    Path file(long seq, String suffix) {
        return dir.resolve(SpoolFiles.baseName(seq) + suffix);
    }

    /** Reads the entry {@code base}.entry of {@code dir}, with its {@code base}.cred; empty if there is none. */
    static Optional<SpoolEntry> readEntry(Path dir, String base) throws IOException {
        Path entryFile = dir.resolve(base + ENTRY);
        Path credentialFile = dir.resolve(base + CREDENTIAL);
        try (FileChannel channel = FileChannel.open(entryFile)) {
            return Optional.of(SpoolReader.readEntry(channel, 0, (int) channel.size(), ref -> {
                if (!Files.exists(credentialFile)) {
                    return null;
                }
                try (RecordScanner scanner = new RecordScanner(credentialFile, RecordCodec.CREDENTIAL_MAGIC)) {
                    return RecordCodec.decodeCredential(scanner.next().payload()).credential();
                } catch (CorruptRecordException e) {
                    return null;
                }
            }));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (CorruptRecordException e) {
            throw new Damaged("dead letter " + entryFile + " is damaged: " + e.getMessage(), e);
        }
    }

    /** A dead letter whose files cannot be read: its entry is not a record, or its credential is gone. */
    public static final class Damaged extends IOException {
        Damaged(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A dead letter's sequence number from its {@code .entry} file's name; empty for any other file. */
    static OptionalLong seqOf(String fileName) {
        if (!fileName.endsWith(ENTRY) || fileName.startsWith(".")) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(fileName.substring(0, fileName.length() - ENTRY.length())));
        } catch (NumberFormatException e) {
            return OptionalLong.empty(); // not one of ours
        }
    }

    private static Instant instant(String text, Instant otherwise) {
        try {
            return text.isEmpty() ? otherwise : Instant.parse(text);
        } catch (DateTimeParseException e) {
            return otherwise;
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
}
