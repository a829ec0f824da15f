package dev.mcpd.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses a spool another user could write, the way ssh refuses a {@code ~/.ssh} others can write: whoever can write
 * {@code replay/} has the relay deliver what they like with the relay's own upstream key, and whoever can write the
 * spool directory can remove acknowledged data. Checked: the relay's spool directory and its {@code dead/},
 * {@code replay/} and {@code corrupt/} (segments live in the spool directory itself), each if it exists.
 *
 * <p>The rule, per directory:
 * <ul>
 *   <li>writable by every user: refused, sticky or not (the sticky bit protects names, not a directory's contents
 *       from additions);</li>
 *   <li>owned by another user than this process's effective uid: refused (its owner can chmod it at will);</li>
 *   <li>writable by its group: allowed only if that group is one of this process's (its gid or a supplementary group)
 *       — what Kubernetes' {@code fsGroup} makes of a volume; otherwise refused.</li>
 * </ul>
 * The spool directory's parent is not checked: it is often a volume root (an emptyDir is 0777) or {@code /tmp}. Who may
 * write it may put another directory under the spool's name after this check: {@link DirectoryIdentity} sees that
 * before every write, and judges the new one by this same rule. Where the file system or the platform
 * cannot say (no POSIX attributes, no {@code /proc/self/status}), nothing is checked, with one log line.
 */
public final class SpoolDirectoryOwnership {

    private static final Logger LOG = LoggerFactory.getLogger(SpoolDirectoryOwnership.class);
    private static final int OTHERS_WRITE = 0002;
    private static final int GROUP_WRITE = 0020;
    private static final int PERMISSION_BITS = 07777;
    private static final AtomicBoolean SKIP_LOGGED = new AtomicBoolean();

    private SpoolDirectoryOwnership() {
    }

    /**
     * Throws {@link UnsafeSpoolDirectoryException} when another user could write the spool in {@code relaySpoolDir};
     * returns quietly when it is safe, or does not exist yet (it is then created owner-only).
     */
    public static void check(Path relaySpoolDir) throws IOException {
        Optional<ProcessIdentity> me = ProcessIdentity.current();
        if (me.isEmpty()) {
            skipped("this platform does not say which user and groups the process has (no "
                    + ProcessIdentity.STATUS + ")");
            return;
        }
        // The spool directory first: while it is unsafe, what its subdirectories say is moot.
        for (Path dir : List.of(relaySpoolDir, relaySpoolDir.resolve(DeadLetters.DIRECTORY),
                relaySpoolDir.resolve(ReplayInbox.DIRECTORY), Quarantine.directory(relaySpoolDir))) {
            Optional<String> problem = problem(dir, me.get());
            if (problem.isPresent()) {
                throw new UnsafeSpoolDirectoryException(problem.get());
            }
        }
    }

    /** What makes {@code dir} unsafe for this process, or empty when it is safe, absent, or cannot be told. */
    static Optional<String> problem(Path dir) throws IOException {
        Optional<ProcessIdentity> me = ProcessIdentity.current();
        return me.isEmpty() ? Optional.empty() : problem(dir, me.get());
    }

    /** What makes {@code dir} unsafe for {@code me}, or empty when it is safe, absent, or cannot be told. */
    static Optional<String> problem(Path dir, ProcessIdentity me) throws IOException {
        Map<String, Object> attributes;
        try {
            attributes = Files.readAttributes(dir, "unix:mode,uid,gid");
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            skipped("the file system of " + dir + " has no POSIX owners and modes");
            return Optional.empty();
        }
        if (!Files.isDirectory(dir)) {
            return Optional.empty(); // opening it says it is not a directory
        }
        int mode = (Integer) attributes.get("mode") & PERMISSION_BITS;
        int owner = (Integer) attributes.get("uid");
        int group = (Integer) attributes.get("gid");
        String octal = String.format(Locale.ROOT, "%04o", mode);
        if ((mode & OTHERS_WRITE) != 0) {
            return Optional.of("spool directory " + dir + " is writable by every user (mode " + octal
                    + "): another user could add entries for the relay to deliver, or remove spooled data;"
                    + " fix it with: chmod 700 " + dir);
        }
        if (owner != me.uid()) {
            return Optional.of("spool directory " + dir + " belongs to uid " + owner + ", not to uid " + me.uid()
                    + " running mcpd: its owner could add or remove entries; check what it holds, then fix it with:"
                    + " chown -R " + me.uid() + " " + dir + " (or run mcpd as uid " + owner + ")");
        }
        if ((mode & GROUP_WRITE) != 0 && !me.groups().contains(group)) {
            return Optional.of("spool directory " + dir + " is writable by group " + group + " (mode " + octal
                    + "), which uid " + me.uid() + " running mcpd is not in: fix it with: chmod 700 " + dir
                    + " (or chgrp it to a group of that user)");
        }
        return Optional.empty();
    }

    private static void skipped(String why) {
        if (SKIP_LOGGED.compareAndSet(false, true)) {
            LOG.info("spool directory ownership and modes not checked: {}", why);
        }
    }
}
