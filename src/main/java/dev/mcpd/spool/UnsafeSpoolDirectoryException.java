package dev.mcpd.spool;

import java.io.IOException;

/**
 * A spool directory another user could write: the relay must not use it. The message is one line naming the
 * directory, what is wrong and the command that fixes it, printed as is.
 */
public final class UnsafeSpoolDirectoryException extends IOException {
    private static final long serialVersionUID = 1L;

    UnsafeSpoolDirectoryException(String message) {
        super(message);
    }
}
