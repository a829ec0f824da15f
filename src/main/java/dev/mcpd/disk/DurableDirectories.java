package dev.mcpd.disk;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.CopyOption;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Directory changes made durable. A new file or directory, a rename or a removal lives in its directory, and only an
 * fsync of that directory makes it survive a power cut: forcing the file itself does not, whatever ext4 usually does
 * (the next fsync of anything often carries the change along; POSIX promises nothing, and other file systems and
 * reordering journals do lose it). {@code kill -9} never shows the difference, only a power cut does.
 */
public final class DurableDirectories {

    private DurableDirectories() {
    }

    /**
     * Creates {@code dir} and its missing parents with {@code attributes} (given to mkdir(2), so the umask can only
     * take bits away), each synced into its parent before the next is made: when this returns, the whole path
     * survives a power cut. A directory that exists is left as it is, and nothing is synced for it.
     */
    public static void create(Path dir, FileAttribute<?>... attributes) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path level = dir.toAbsolutePath(); level != null && !Files.isDirectory(level); level = level.getParent()) {
            missing.push(level);
        }
        while (!missing.isEmpty()) {
            Path level = missing.pop();
            try {
                Files.createDirectory(level, attributes);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(level)) {
                    throw new IOException(level + " exists and is not a directory", e);
                }
                // made by another process in between: whether it synced it is not known, so sync it here too
            }
            sync(level.getParent());
        }
    }

    /** fsync of a directory: the names created, renamed or removed in it survive a power cut. */
    public static void sync(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /**
     * Renames {@code from} to {@code to} and syncs both directories, the target's first: a power cut leaves the
     * entry under its new name, or under both (never under neither) — what a reader of either directory must allow.
     */
    public static void move(Path from, Path to, CopyOption... options) throws IOException {
        Files.move(from, to, options);
        Path target = to.toAbsolutePath().getParent();
        Path source = from.toAbsolutePath().getParent();
        sync(target);
        if (!source.equals(target)) {
            sync(source);
        }
    }
}
