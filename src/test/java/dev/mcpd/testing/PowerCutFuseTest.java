package dev.mcpd.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpd.testing.VolatileLayer.CutPlan;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The power-cut model served over FUSE behaves as it does in-process: through the mount, a synced name and synced
 * bytes survive a cut, unsynced ones do not, modes are the ones asked for, and once the power is cut every change
 * fails with an I/O error. Skipped, saying why, where FUSE cannot be mounted (no /dev/fuse, libfuse 2 or root).
 */
class PowerCutFuseTest {

    @TempDir
    Path temp;

    @Test
    void throughTheMountWhatWasSyncedSurvivesACutAndNothingElse() throws Exception {
        assumeTrue(PowerCutFuse.unavailable().isEmpty(), () -> "FUSE: " + PowerCutFuse.unavailable().get());
        VolatileLayer layer = new VolatileLayer(Files.createDirectories(temp.resolve("backing")));
        PowerCutFuse fuse = PowerCutFuse.mount(layer, temp.resolve("mnt"));
        try {
            Path mnt = fuse.mountPoint();
            Files.createDirectory(mnt.resolve("spool"), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            sync(mnt);
            try (FileChannel file = FileChannel.open(mnt.resolve("spool/synced"), StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE)) {
                file.write(ByteBuffer.wrap("durable".getBytes(StandardCharsets.US_ASCII)));
                file.force(false);
                file.write(ByteBuffer.wrap(" and lost".getBytes(StandardCharsets.US_ASCII)));
            }
            sync(mnt.resolve("spool"));
            Files.writeString(mnt.resolve("spool/unsynced"), "never synced");
            Files.move(mnt.resolve("spool/unsynced"), mnt.resolve("spool/renamed"), StandardCopyOption.ATOMIC_MOVE);
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                    mnt.resolve("spool"))));
            assertEquals("durable and lost", Files.readString(mnt.resolve("spool/synced")));

            VolatileLayer.Survivors survivors = layer.cut(CutPlan.dropAll());
            IOException off = assertThrows(IOException.class, () -> Files.writeString(mnt.resolve("spool/x"), "x"));
            assertTrue(off.getMessage().contains("Input/output error"), off.getMessage());
            Path image = temp.resolve("image");
            survivors.writeTo(image);
            assertEquals("durable", Files.readString(image.resolve("spool/synced")));
            assertFalse(Files.exists(image.resolve("spool/renamed")));
            assertFalse(Files.exists(image.resolve("spool/unsynced")));
        } finally {
            fuse.unmount();
        }
    }

    private static void sync(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
