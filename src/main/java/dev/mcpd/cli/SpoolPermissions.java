package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import dev.mcpd.spool.SpoolDirectoryOwnership;
import dev.mcpd.spool.UnsafeSpoolDirectoryException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The commands that write the spool (the relay, {@code dead replay}, {@code dead purge}) refuse one another user
 * could write: one line and exit status 2, like a wrong option, since the operator must fix it before anything runs.
 */
final class SpoolPermissions {

    private SpoolPermissions() {
    }

    static void require(Path relaySpoolDir) {
        try {
            SpoolDirectoryOwnership.check(relaySpoolDir);
        } catch (UnsafeSpoolDirectoryException e) {
            throw new ConfigException(e.getMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the owner and mode of " + relaySpoolDir + ": "
                    + e.getMessage(), e);
        }
    }
}
