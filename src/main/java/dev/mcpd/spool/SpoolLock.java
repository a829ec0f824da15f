package dev.mcpd.spool;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Optional;

/**
 * An advisory lock on {@code <relay-spool>/spool.lock}, held by the process that has the spool open: two relays on one
 * spool would hand out the same sequence numbers and overwrite each other's segments, and the CLI learns from it
 * whether a relay is running ({@code dead replay} then waits for it to take the entries). The kernel drops the lock
 * with the process, so a {@code kill -9} never leaves it behind.
 */
public final class SpoolLock implements Closeable {

    static final String FILE = "spool.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private SpoolLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** The lock, or empty when another process (or another spool in this one) holds it. */
    public static Optional<SpoolLock> tryAcquire(Path relaySpoolDir) throws IOException {
        FileChannel channel = open(relaySpoolDir.resolve(FILE));
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                return Optional.empty();
            }
            return Optional.of(new SpoolLock(channel, lock));
        } catch (OverlappingFileLockException e) {
            channel.close();
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Whether a running relay holds the spool in {@code relaySpoolDir} open now. */
    public static boolean heldByARelay(Path relaySpoolDir) throws IOException {
        if (!relaySpoolDir.resolve(FILE).toFile().exists()) {
            return false;
        }
        Optional<SpoolLock> mine = tryAcquire(relaySpoolDir);
        mine.ifPresent(SpoolLock::closeQuietly);
        return mine.isEmpty();
    }

    /**
     * Waits for the operators' lock ({@code dead.lock}), which {@code dead replay} and {@code dead purge} hold while
     * they run: a second one waits for the first, then finds what the first took gone.
     */
    public static SpoolLock operators(Path relaySpoolDir) throws IOException {
        FileChannel channel = open(relaySpoolDir.resolve("dead.lock"));
        try {
            return new SpoolLock(channel, channel.lock());
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Opens (creating, owner-only like every file of the spool) the file locked. */
    private static FileChannel open(Path file) throws IOException {
        return FileChannel.open(file, EnumSet.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException e) {
            // released with the channel all the same
        }
    }

    @Override
    public void close() throws IOException {
        try (channel) {
            lock.release();
        }
    }
}
