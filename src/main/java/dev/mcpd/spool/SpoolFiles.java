package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/** Names the spool's files, and creates them and its directories owner-only. */
final class SpoolFiles {

    static final String SEGMENT_SUFFIX = ".seg";
    static final String CREDENTIAL_SUFFIX = ".cred";

    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_DIR =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private SpoolFiles() {
    }

    static Path segment(Path dir, long firstSeq) {
        return dir.resolve(baseName(firstSeq) + SEGMENT_SUFFIX);
    }

    static Path credentials(Path dir, long firstSeq) {
        return dir.resolve(baseName(firstSeq) + CREDENTIAL_SUFFIX);
    }

    /** Segment names are the first sequence number they may hold, zero-padded so that names sort in seq order. */
    static String baseName(long firstSeq) {
        return String.format(Locale.ROOT, "%020d", firstSeq);
    }

    /** The first sequence number named by a segment file, or -1 when the name is not a segment's. */
    static long firstSeqOf(Path segment) {
        return firstSeqOf(segment, SEGMENT_SUFFIX);
    }

    /** The first sequence number of the segment a file named {@code <seq><suffix>} belongs to, or -1. */
    static long firstSeqOf(Path file, String suffix) {
        String name = file.getFileName().toString();
        if (!name.endsWith(suffix) || name.length() != 20 + suffix.length()) {
            return -1;
        }
        try {
            return Long.parseLong(name.substring(0, 20));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Creates the directory (and missing parents) with mode 0700, given to mkdir(2): the umask can only take bits
     * away, so what is created always passes {@link SpoolDirectoryOwnership}, whatever the umask. Each level made is
     * synced into its parent: a spool created a moment before a power cut is still there after it. One that exists
     * keeps its mode: an unsafe one is refused, not silently chmod'ed (what another user planted would stay).
     */
    static void createDirectory(Path dir) throws IOException {
        DurableDirectories.create(dir, OWNER_ONLY_DIR);
    }

    /**
     * Creates a new file with mode 0600 from the start (the mode is given to open(2), never chmod'ed later), for
     * appending. The caller must sync its directory
     * ({@link DurableDirectories#sync}) before relying on its name.
     */
    static FileChannel createOwnerOnly(Path file) throws IOException {
        return FileChannel.open(file, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.READ), OWNER_ONLY_FILE);
    }

}
