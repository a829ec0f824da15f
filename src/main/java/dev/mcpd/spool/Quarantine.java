package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps damaged spool bytes in {@code <spool>/corrupt/} so an operator can look at them: the relay never deletes or
 * truncates them. A copy is named {@code <segment base name>-<offset>.bytes} (which segment, where the damage starts;
 * {@code <segment>-<offset>-<length>.bytes} if that name holds a copy of another length), is written under a
 * temporary name with mode 0600, forced, renamed and the directory forced, and is written once: if a copy of the same
 * region is there already, it was kept at an earlier start or delivery.
 */
final class Quarantine {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);
    static final String DIRECTORY = "corrupt";
    static final String SUFFIX = ".bytes";

    private Quarantine() {
    }

    static Path directory(Path spoolDir) {
        return spoolDir.resolve(DIRECTORY);
    }

    /** The name of the copy of damage starting at {@code offset} of segment {@code segmentFirstSeq}. */
    static String name(long segmentFirstSeq, long offset) {
        return SpoolFiles.baseName(segmentFirstSeq) + "-" + offset + SUFFIX;
    }

    /**
     * The name used when {@link #name} is taken by a copy of another length (damage found at delivery was one record;
     * found at a later start, the region from the same offset may span more).
     */
    private static String nameWithLength(long segmentFirstSeq, long offset, long length) {
        return SpoolFiles.baseName(segmentFirstSeq) + "-" + offset + "-" + length + SUFFIX;
    }

    /** Where a region's copy is: its name in corrupt/, and whether it was made just now. */
    record Kept(String name, boolean now) {
    }

    /** The name of the copy of this region already in corrupt/, or null when there is none. */
    static String existing(Path spoolDir, long segmentFirstSeq, long offset, long length) throws IOException {
        Path dir = directory(spoolDir);
        Path plain = dir.resolve(name(segmentFirstSeq, offset));
        if (Files.exists(plain) && Files.size(plain) == length) {
            return plain.getFileName().toString();
        }
        Path withLength = dir.resolve(nameWithLength(segmentFirstSeq, offset, length));
        return Files.exists(withLength) ? withLength.getFileName().toString() : null;
    }

    /**
     * Copies {@code length} bytes at {@code offset} of segment {@code segmentFirstSeq} (open as {@code source}) to
     * corrupt/, durably, unless a copy of that region is there already.
     */
    static Kept keep(Path spoolDir, long segmentFirstSeq, FileChannel source, long offset, long length)
            throws IOException {
        String found = existing(spoolDir, segmentFirstSeq, offset, length);
        if (found != null) {
            return new Kept(found, false);
        }
        Path dir = directory(spoolDir);
        String name = Files.exists(dir.resolve(name(segmentFirstSeq, offset)))
                ? nameWithLength(segmentFirstSeq, offset, length)
                : name(segmentFirstSeq, offset);
        SpoolFiles.createDirectory(dir);
        Path temporary = dir.resolve("." + name + ".tmp");
        Files.deleteIfExists(temporary); // a copy a crash interrupted; the damage is still in its segment
        try (FileChannel out = SpoolFiles.createOwnerOnly(temporary)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) Math.max(1, Math.min(length, 1 << 20)));
            long copied = 0;
            while (copied < length) {
                buffer.clear();
                buffer.limit((int) Math.min(buffer.capacity(), length - copied));
                int n = source.read(buffer, offset + copied);
                if (n < 0) {
                    break; // the file is shorter than it was when scanned: keep what there is
                }
                buffer.flip();
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                copied += n;
            }
            out.force(true);
        }
        Files.move(temporary, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        DurableDirectories.sync(dir);
        return new Kept(name, true);
    }

    /**
     * Keeps the raw bytes of the unreadable entry {@code seq} in corrupt/ (named, like damage found at start, by its
     * segment and offset), logging one line either way. False when the copy failed: the entry must then stay in its
     * segment, out of delivery until the next start, which finds the damage again — never dropped without a copy.
     */
    static boolean keepEntry(Path spoolDir, long seq, long segmentFirstSeq, FileChannel source, long offset,
                             int size, CorruptRecordException why) {
        String name = name(segmentFirstSeq, offset);
        try {
            name = keep(spoolDir, segmentFirstSeq, source, offset, size).name();
        } catch (IOException e) {
            LOG.error("spool entry {} is damaged ({}) and could not be kept in {}/{} ({}); left in its segment and"
                    + " out of delivery until the next start", seq, why.getMessage(), DIRECTORY, name, e.toString());
            return false;
        }
        LOG.warn("spool entry {} is damaged ({}); kept in {}/{} and taken out of delivery", seq, why.getMessage(),
                DIRECTORY, name);
        return true;
    }

    /** The copies held in {@code corrupt/} (temporary files of an interrupted copy left out). */
    static long count(Path spoolDir) throws IOException {
        Path dir = directory(spoolDir);
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> !f.getFileName().toString().startsWith(".")).count();
        }
    }
}
