package dev.mcpd.spool;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Who this process is to the file system: its effective uid, and every group it acts with (its effective gid and its
 * supplementary groups), read from {@code /proc/self/status}. Linux only, and no JDK-internal class: the shaded jar
 * runs on any Java 17+ runtime, a jlinked one included.
 *
 * @param uid    the effective user id
 * @param groups the effective group id and the supplementary group ids
 */
record ProcessIdentity(int uid, Set<Integer> groups) {

    static final Path STATUS = Path.of("/proc/self/status");

    ProcessIdentity {
        groups = Set.copyOf(groups);
    }

    /** This process, or empty where {@code /proc/self/status} does not say (not Linux). */
    static Optional<ProcessIdentity> current() {
        try {
            return parse(Files.readAllLines(STATUS, StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * From the lines of a {@code /proc/<pid>/status}: {@code Uid:} and {@code Gid:} list the real, effective, saved
     * and file-system ids; {@code Groups:} the supplementary groups (possibly none). Empty if a line is missing.
     */
    static Optional<ProcessIdentity> parse(List<String> status) {
        Integer uid = null;
        Integer gid = null;
        Set<Integer> groups = new HashSet<>();
        boolean groupsSeen = false;
        for (String line : status) {
            String[] fields = line.trim().split("\\s+");
            switch (fields[0]) {
                case "Uid:" -> uid = Integer.parseUnsignedInt(fields[2]);
                case "Gid:" -> gid = Integer.parseUnsignedInt(fields[2]);
                case "Groups:" -> {
                    groupsSeen = true;
                    for (int i = 1; i < fields.length; i++) {
                        groups.add(Integer.parseUnsignedInt(fields[i]));
                    }
                }
                default -> {
                    // not about identity
                }
            }
        }
        if (uid == null || gid == null || !groupsSeen) {
            return Optional.empty();
        }
        groups.add(gid);
        return Optional.of(new ProcessIdentity(uid, groups));
    }
}
