package dev.mcpd.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory a spool opened, told by its file key (device and inode), not by its path. Another user who may write
 * the spool directory's parent can rename the directory away and put one of theirs — or a link — under its name once
 * the start's checks are done: the relay would then write spooled requests (and their credentials) into it, and take
 * its entries for delivery with the relay's own upstream key. Before each write the relay makes by name (a group
 * commit, a new segment, the write probe, a dead letter), the name must still lead to the directory it opened, without
 * following a link. A different directory there is judged as at the start ({@link SpoolDirectoryOwnership}): one that
 * passes — the relay's own user made it, and nobody else may write it: an operator's {@code mkdir} after the
 * directory was removed — is written from then on; a link, or one that does not pass, is never written.
 */
final class DirectoryIdentity {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryIdentity.class);

    private final Path dir;
    private volatile Object key;

    private DirectoryIdentity(Path dir, Object key) {
        this.dir = dir;
        this.key = key;
    }

    /**
     * The directory at {@code dir} now. Nothing is compared later where the file system gives no key, or where there
     * is no directory to read yet (a command that only reads a spool without one).
     */
    static DirectoryIdentity of(Path dir) throws IOException {
        try {
            return new DirectoryIdentity(dir, Files.readAttributes(dir, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).fileKey());
        } catch (NoSuchFileException none) {
            return new DirectoryIdentity(dir, null);
        }
    }

    /**
     * Throws when {@code dir} names something else than the directory it named at {@link #of} and that is not a
     * directory the relay may trust; a vanished one is the caller's to say.
     */
    synchronized void verify() throws IOException {
        if (key == null) {
            return;
        }
        BasicFileAttributes now;
        try {
            now = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException gone) {
            return;
        }
        if (now.isDirectory() && key.equals(now.fileKey())) {
            return;
        }
        Optional<String> untrusted = now.isDirectory() ? SpoolDirectoryOwnership.problem(dir)
                : Optional.of(now.isSymbolicLink() ? "a link is there now" : "a file is there now");
        if (untrusted.isPresent()) {
            throw new IOException("spool directory " + dir + " was replaced since the relay opened it ("
                    + untrusted.get() + "): nothing is written to it; check who may write " + dir.getParent()
                    + " and what is there, then restart the relay");
        }
        LOG.info("spool directory {} is a new directory, the relay's own: writing there from now on", dir);
        key = now.fileKey();
    }
}
