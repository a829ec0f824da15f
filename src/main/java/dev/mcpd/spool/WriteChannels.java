package dev.mcpd.spool;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * What the spool writes its segments and credential files through: the channel as opened, or — in a test — a channel
 * that fails as a full or broken disk does, so the write-error paths are tested without root or a small file system
 * (the real full-disk test on a tmpfs is kept beside it).
 */
@FunctionalInterface
interface WriteChannels {

    /** The channels as opened. */
    WriteChannels AS_OPENED = (file, channel) -> channel;

    /** The channel to write {@code file} through, given the one just opened. */
    FileChannel wrap(Path file, FileChannel opened) throws IOException;
}
