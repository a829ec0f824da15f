package dev.mcpd.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.VolatileLayer.CutPlan;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The power-cut model itself, so that a test passing on it means something: what was synced survives, what was not
 * is lost unless the plan keeps it, a rename is kept or lost whole, a removal not synced brings the file back with its
 * synced bytes, a torn tail is a prefix of what was written, and nothing changes once the power is off.
 */
class VolatileLayerTest {

    @TempDir
    Path temp;

    private static void write(Path file, String text, boolean force) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            channel.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
            if (force) {
                channel.force(false);
            }
        }
    }

    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    private Path image(VolatileLayer layer, CutPlan plan) throws IOException {
        Path image = temp.resolve("image-" + plan.seed() + "-" + System.nanoTime());
        layer.cut(plan).writeTo(image);
        return image;
    }

    @Test
    void aNameSurvivesOnlyOnceItsDirectoryIsSyncedAndBytesOnlyOnceTheFileIs() throws Exception {
        PowerCutFileSystem fs = PowerCutFileSystem.over(temp.resolve("disk"));
        Path root = fs.root();
        Files.createDirectory(root.resolve("synced"));
        Files.createDirectory(root.resolve("unsynced"));
        syncDirectory(root); // both names durable; their contents not yet
        write(root.resolve("synced/a"), "forced", true);
        syncDirectory(root.resolve("synced"));
        write(root.resolve("synced/b"), "not forced", false);
        syncDirectory(root.resolve("synced"));
        write(root.resolve("unsynced/c"), "forced, name not synced", true);

        Path image = image(fs.layer(), CutPlan.dropAll());
        assertEquals("forced", Files.readString(image.resolve("synced/a")));
        assertEquals(0, Files.size(image.resolve("synced/b")), "its name survives, its bytes do not");
        assertFalse(Files.exists(image.resolve("unsynced/c")), "forcing a file does not make its name durable");
        assertTrue(Files.isDirectory(image.resolve("unsynced")));
    }

    @Test
    void aRemovalOrRenameNotSyncedIsUndoneWholeWithTheSyncedBytes() throws Exception {
        PowerCutFileSystem fs = PowerCutFileSystem.over(temp.resolve("disk"));
        Path root = fs.root();
        write(root.resolve("kept"), "synced bytes", true);
        write(root.resolve("moved"), "moved bytes", true);
        syncDirectory(root);
        write(root.resolve("kept"), " and unsynced ones", false);
        Files.delete(root.resolve("kept"));
        Files.move(root.resolve("moved"), root.resolve("renamed"), StandardCopyOption.ATOMIC_MOVE);

        Path image = image(fs.layer(), CutPlan.dropAll());
        assertEquals("synced bytes", Files.readString(image.resolve("kept")));
        assertEquals("moved bytes", Files.readString(image.resolve("moved")));
        assertFalse(Files.exists(image.resolve("renamed")));
    }

    @Test
    void aPlanKeepsSomeUnsyncedChangesEachWholeAndTearsTailsToPrefixes() throws Exception {
        Set<String> outcomes = new HashSet<>();
        for (long seed = 1; seed <= 200; seed++) {
            PowerCutFileSystem fs = PowerCutFileSystem.over(temp.resolve("disk-" + seed));
            Path root = fs.root();
            write(root.resolve("log"), "0123456789", true);
            write(root.resolve("from"), "x", true);
            syncDirectory(root);
            write(root.resolve("log"), "abcdefghij", false);
            Files.move(root.resolve("from"), root.resolve("to"), StandardCopyOption.ATOMIC_MOVE);
            write(root.resolve("new"), "n", true);

            Path image = image(fs.layer(), new CutPlan(seed, 0.5, true, false));
            boolean from = Files.exists(image.resolve("from"));
            assertTrue(from != Files.exists(image.resolve("to")), "a rename is kept or lost whole");
            String log = Files.readString(image.resolve("log"));
            assertTrue("0123456789abcdefghij".startsWith(log) && log.length() >= 10, "torn to a prefix: " + log);
            outcomes.add((from ? "from" : "to") + "," + Files.exists(image.resolve("new")) + "," + (log.length() > 10));
        }
        assertEquals(8, outcomes.size(), "every combination of kept and lost changes and torn tails: " + outcomes);
    }

    @Test
    void onceThePowerIsCutNothingChangesAndTheCutComesAtTheChosenSync() throws Exception {
        PowerCutFileSystem fs = PowerCutFileSystem.over(temp.resolve("disk"));
        Path root = fs.root();
        fs.layer().cutAt(sync -> sync.directory(), CutPlan.dropAll());
        write(root.resolve("a"), "forced", true);
        IOException cut = assertThrows(IOException.class, () -> syncDirectory(root));
        assertTrue(cut.getMessage().contains("power"), cut.getMessage());
        assertTrue(fs.layer().isOff());
        assertThrows(IOException.class, () -> write(root.resolve("b"), "after", false));
        assertThrows(IOException.class, () -> Files.delete(root.resolve("a")));
        assertEquals(List.of(), fs.layer().survivors().files(), "the sync the cut replaced never happened");
        assertArrayEquals("forced".getBytes(StandardCharsets.US_ASCII), Files.readAllBytes(root.resolve("a")),
                "reading is still possible: the process that reads is about to die anyway");
    }
}
