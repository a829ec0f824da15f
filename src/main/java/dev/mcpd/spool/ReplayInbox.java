package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * The hand-over of replayed dead letters to a relay: {@code <relay-spool>/replay/}. The CLI never writes
 * the relay's segments — a running relay owns them, and holds their state in memory. It puts each dead letter it
 * replays here instead, as a directory {@code replay/<seq>/} with the entry and its credential, and the relay takes
 * every such directory into its spool, written as a sender's request is ({@link DurableAppend}): at start, and every
 * second while it runs.
 *
 * <p>Crash safety is ordering. The CLI copies the files into a hidden temporary directory, forces them and it, renames
 * the directory into place (atomic), syncs {@code replay/} (itself synced into the spool directory when it is made),
 * and only then removes the dead letter; the relay appends the
 * entry, waits until it is durable, writes a receipt ({@code <seq>.taken}: the new sequence number), and only then
 * removes the directory, its {@code .entry} first. A crash at any point leaves the entry in dead/, here, in the spool,
 * or in two of them — never in none. Twice means sent twice with its original idempotency key: stored once.
 */
public final class ReplayInbox {

    public static final String DIRECTORY = "replay";
    /** Receipts and temporary copies nobody came back for are removed after this long. */
    static final Duration LEFTOVER_AGE = Duration.ofHours(1);
    private static final String RECEIPT = ".taken";

    /** A dead letter the relay took: its sequence number in dead/, and its new one in the spool. */
    public record Taken(long deadSeq, long seq) {
    }

    /**
     * What one pass over the inbox did: the entries taken, whether the spool had no room for the next, and the dead
     * letters that could not be read (each moved to the spool's {@code corrupt/}, so the rest are taken).
     */
    public record Adoption(List<Taken> taken, boolean spoolFull, List<Damaged> damaged) {
        public Adoption(List<Taken> taken, boolean spoolFull) {
            this(taken, spoolFull, List.of());
        }
    }

    /** A replayed dead letter that could not be read, and where its files went. */
    public record Damaged(long deadSeq, String why, Path keptIn) {
    }

    /** Entries waiting to be taken and the bytes of their files. */
    public record Waiting(int entries, long bytes) {
    }

    /**
     * What a replay did: the dead letters handed over, in order; those it left in dead/ for a reason of their own;
     * and, when it stopped because the spool's bound had no room for the next, where.
     */
    public record Replay(List<Long> handedOver, List<Left> left, Optional<Stop> stoppedForRoom) {
    }

    /** A dead letter left in dead/: not there (purged, or replayed by another), or damaged, with why. */
    public record Left(long seq, Optional<String> damage) {
    }

    /** Dead letter {@code seq} needs {@code needs} bytes, the bound had {@code room}; it and {@code left} more stay. */
    public record Stop(long seq, long needs, long room, int left) {
    }

    private final Path spoolDir;
    private final Path dir;

    public ReplayInbox(Path relaySpoolDir) {
        this.spoolDir = relaySpoolDir;
        this.dir = relaySpoolDir.resolve(DIRECTORY);
    }

    /**
     * Hands dead letters over, in order — those named, or every one in dead/ — as far as the spool's bound has room for
     * them: what the spool's files hold and what waits here already count, as the relay will count them. A damaged
     * dead letter stays in dead/ (the relay could not read it either: handed over, it would only be moved to
     * corrupt/). Replays and purges take turns on the operators' lock, so two never hand over the same letter.
     */
    public Replay replay(DeadLetters dead, Optional<List<Long>> named, long spoolMaxBytes) throws IOException {
        List<Long> handed = new ArrayList<>();
        List<Left> left = new ArrayList<>();
        try (SpoolLock turn = SpoolLock.operators(spoolDir)) {
            List<Long> seqs = named.isPresent() ? named.get() : dead.seqsOnDisk();
            long used = SpoolReader.check(spoolDir).bytes() + waiting().bytes();
            for (int i = 0; i < seqs.size(); i++) {
                long seq = seqs.get(i);
                OptionalLong size = dead.entryBytes(seq);
                if (size.isEmpty()) {
                    left.add(new Left(seq, Optional.empty()));
                    continue;
                }
                Optional<String> damage = dead.find(seq).flatMap(DeadLetter::damaged);
                if (damage.isPresent()) {
                    left.add(new Left(seq, damage));
                    continue;
                }
                if (used + size.getAsLong() > spoolMaxBytes) {
                    return new Replay(handed, left, Optional.of(new Stop(seq, size.getAsLong(),
                            Math.max(0, spoolMaxBytes - used), seqs.size() - i)));
                }
                if (handOver(dead, seq)) {
                    handed.add(seq);
                    used += size.getAsLong();
                } else {
                    left.add(new Left(seq, Optional.empty()));
                }
            }
        }
        return new Replay(handed, left, Optional.empty());
    }

    public Path directory() {
        return dir;
    }

    /**
     * Moves dead letter {@code seq} here, crash-safely (see the class comment). False when dead/ does not hold it.
     * If it is already here (an earlier hand-over that crashed before removing it from dead/), that one stands and the
     * dead letter is removed.
     */
    public boolean handOver(DeadLetters dead, long seq) throws IOException {
        String base = SpoolFiles.baseName(seq);
        Path entry = dead.file(seq, DeadLetters.ENTRY);
        if (!Files.exists(entry)) {
            return false;
        }
        SpoolFiles.createDirectory(dir);
        Path target = dir.resolve(base);
        if (!Files.isDirectory(target)) {
            Path temporary = dir.resolve("." + base + "." + ProcessHandle.current().pid() + ".tmp");
            deleteTree(temporary);
            SpoolFiles.createDirectory(temporary);
            try {
                copyDurably(entry, temporary.resolve(base + DeadLetters.ENTRY));
                Path credential = dead.file(seq, DeadLetters.CREDENTIAL);
                if (Files.exists(credential)) {
                    copyDurably(credential, temporary.resolve(base + DeadLetters.CREDENTIAL));
                }
            } catch (NoSuchFileException e) {
                deleteTree(temporary); // another replay or a purge took it while we copied
                return false;
            }
            DurableDirectories.sync(temporary);
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | DirectoryNotEmptyException e) {
                deleteTree(temporary);
            }
            DurableDirectories.sync(dir);
        }
        dead.purge(seq);
        return true;
    }

    /** The entries waiting here now. */
    public Waiting waiting() throws IOException {
        int entries = 0;
        long bytes = 0;
        for (long seq : waitingSeqs()) {
            Path entry = dir.resolve(SpoolFiles.baseName(seq)).resolve(SpoolFiles.baseName(seq) + DeadLetters.ENTRY);
            try {
                bytes += Files.size(entry);
                entries++;
            } catch (NoSuchFileException e) {
                // taken while we looked
            }
        }
        return new Waiting(entries, bytes);
    }

    /**
     * Takes every waiting entry into the spool through {@code append}, oldest first, with its original idempotency key
     * and credential, a new sequence number, and {@code nowMillis} as its receive time (its wait, and so
     * {@code --spool-max-age}, starts again). Stops at the first that does not fit the spool's bound: it and the rest
     * wait here for room.
     */
    public Adoption adoptInto(DurableAppend append, long nowMillis) throws IOException {
        List<Taken> taken = new ArrayList<>();
        List<Damaged> damaged = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return new Adoption(taken, false); // nothing was ever replayed here
        }
        for (long deadSeq : waitingSeqs()) {
            String base = SpoolFiles.baseName(deadSeq);
            Path entryDir = dir.resolve(base);
            Optional<SpoolEntry> entry;
            try {
                entry = DeadLetters.readEntry(entryDir, base);
            } catch (DeadLetters.Damaged e) {
                // Not readable now, nor ever: its files go to corrupt/, for a person to look at, and the rest go on.
                Path corrupt = Quarantine.directory(dir.getParent());
                SpoolFiles.createDirectory(corrupt); // owner-only, like every directory of the spool
                Path kept = corrupt.resolve("replay-" + base);
                DurableDirectories.move(entryDir, kept, StandardCopyOption.ATOMIC_MOVE);
                damaged.add(new Damaged(deadSeq, e.getMessage(), kept));
                continue;
            }
            if (entry.isEmpty()) {
                deleteTree(entryDir); // a removal a crash interrupted: the entry is already in the spool
                continue;
            }
            SpoolRequest request = entry.get().request();
            SpoolRequest again = request.receivedAgainAt(nowMillis);
            long seq;
            try {
                seq = append.append(again);
            } catch (SpoolFullException e) {
                return new Adoption(taken, true, damaged);
            } catch (IOException e) {
                throw new IOException("could not append replayed entry " + deadSeq + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Adoption(taken, false, damaged);
            }
            Path receipt = dir.resolve(base + RECEIPT);
            Path receiptTemporary = dir.resolve("." + base + RECEIPT + ".tmp");
            Files.writeString(receiptTemporary, Long.toString(seq), StandardCharsets.US_ASCII);
            Files.move(receiptTemporary, receipt, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.deleteIfExists(entryDir.resolve(base + DeadLetters.ENTRY));
            deleteTree(entryDir);
            DurableDirectories.sync(dir);
            taken.add(new Taken(deadSeq, seq));
        }
        removeLeftovers();
        return new Adoption(taken, false, damaged);
    }

    /** The new sequence number of dead letter {@code deadSeq}, once a relay took it (its receipt is then removed). */
    public OptionalLong takenAs(long deadSeq) throws IOException {
        Path receipt = dir.resolve(SpoolFiles.baseName(deadSeq) + RECEIPT);
        try {
            long seq = Long.parseLong(Files.readString(receipt, StandardCharsets.US_ASCII).strip());
            Files.deleteIfExists(receipt);
            return OptionalLong.of(seq);
        } catch (NoSuchFileException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** Whether dead letter {@code deadSeq} still waits here. */
    public boolean waits(long deadSeq) {
        return Files.isDirectory(dir.resolve(SpoolFiles.baseName(deadSeq)));
    }

    private List<Long> waitingSeqs() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> listing = Files.list(dir)) {
            return listing.map(path -> path.getFileName().toString())
                    .filter(name -> name.length() == 20 && name.chars().allMatch(Character::isDigit))
                    .map(Long::parseLong).sorted().toList();
        }
    }

    /** Receipts and temporary copies older than an hour: their CLI went away (or crashed) long ago. */
    private void removeLeftovers() throws IOException {
        long cutoff = System.currentTimeMillis() - LEFTOVER_AGE.toMillis();
        try (Stream<Path> listing = Files.list(dir)) {
            for (Path path : listing.toList()) {
                String name = path.getFileName().toString();
                if (!(name.endsWith(RECEIPT) || (name.startsWith(".") && name.endsWith(".tmp")))) {
                    continue;
                }
                try {
                    if (Files.getLastModifiedTime(path).toMillis() < cutoff) {
                        deleteTree(path);
                    }
                } catch (NoSuchFileException e) {
                    // gone already
                }
            }
        }
    }

    /** Copies into a new owner-only file (a credential must never be readable by others) and forces it. */
    private static void copyDurably(Path from, Path to) throws IOException {
        try (FileChannel source = FileChannel.open(from, StandardOpenOption.READ);
             FileChannel copy = SpoolFiles.createOwnerOnly(to)) {
            long size = source.size();
            for (long done = 0; done < size; ) {
                done += source.transferTo(done, size - done, copy);
            }
            copy.force(false);
        }
    }

    private static void deleteTree(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            try (Stream<Path> children = Files.list(path)) {
                for (Path child : children.toList()) {
                    Files.deleteIfExists(child);
                }
            }
        }
        Files.deleteIfExists(path);
    }
}
