package dev.mcpd.spool;

import dev.mcpd.disk.DurableDirectories;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's identity ({@code mcpd-relay-id}): 32 hex digits, drawn at random when the spool is created
 * and kept in its {@code id} file, so it survives restarts and crashes and is new only with a new spool. Written to a
 * temporary file, forced, renamed and the directory forced: a crash leaves the old id, the new one, or none (then the
 * next start makes one; no sequence number was handed out under an id that was never durable, because the id is
 * made before the spool takes its first request).
 */
final class SpoolIdentity {

    static final String FILE = "id";
    private static final Pattern FORM = Pattern.compile("[0-9a-f]{32}");
    private static final Logger LOG = LoggerFactory.getLogger(SpoolIdentity.class);

    private SpoolIdentity() {
    }

    /** The id the spool in {@code dir} has now, read without making one; empty when it has none (or a damaged one). */
    static Optional<String> read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        String id = Files.readString(file, StandardCharsets.US_ASCII).strip();
        return FORM.matcher(id).matches() ? Optional.of(id) : Optional.empty();
    }

    /** The id of the spool in {@code dir}, made now if it has none (or an unreadable one). */
    static String readOrCreate(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        if (Files.exists(file)) {
            String id = Files.readString(file, StandardCharsets.US_ASCII).strip();
            if (FORM.matcher(id).matches()) {
                return id;
            }
            LOG.warn("the spool's id file {} is damaged; the spool gets a new id (a sync naming the old one is"
                    + " answered 421)", file);
        }
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        String id = HexFormat.of().formatHex(random);
        Path temporary = dir.resolve("." + FILE + ".tmp");
        Files.deleteIfExists(temporary);
        try (FileChannel channel = SpoolFiles.createOwnerOnly(temporary)) {
            ByteBuffer bytes = ByteBuffer.wrap((id + "\n").getBytes(StandardCharsets.US_ASCII));
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            channel.force(true);
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        DurableDirectories.sync(dir);
        return id;
    }
}
