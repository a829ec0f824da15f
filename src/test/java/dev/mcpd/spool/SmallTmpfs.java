package dev.mcpd.spool;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real, small file system (tmpfs of a few hundred KiB) for tests of a full disk: writes to it fail with ENOSPC
 * exactly as on a full production disk, no fault injection involved. Mounting needs root; without it the test is
 * skipped (not passed) with the reason. {@link #close} unmounts it.
 */
public final class SmallTmpfs implements AutoCloseable {

    private final Path mountPoint;
    private Path filler;

    private SmallTmpfs(Path mountPoint) {
        this.mountPoint = mountPoint;
    }

    /** Mounts a tmpfs of {@code size} (mount's syntax, e.g. {@code 512k}) on {@code mountPoint}, creating it. */
    public static SmallTmpfs mount(Path mountPoint, String size) {
        try {
            Files.createDirectories(mountPoint);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Result mounted = run(List.of("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs",
                mountPoint.toString()));
        Assumptions.assumeTrue(mounted.status() == 0,
                "needs root to mount a small tmpfs: `mount -t tmpfs` said (" + mounted.status() + "): "
                        + mounted.output().strip());
        return new SmallTmpfs(mountPoint);
    }

    public Path path() {
        return mountPoint;
    }

    /**
     * Fills the file system to the last byte with a file of its own (writing until ENOSPC). Returns how many bytes
     * it took.
     */
    public long fill() throws IOException {
        filler = mountPoint.resolve("filler-" + System.nanoTime());
        byte[] block = new byte[4096];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(block);
                out.flush();
                written += block.length;
            }
        } catch (IOException full) {
            if (!String.valueOf(full.getMessage()).contains("No space left on device")) {
                throw full;
            }
        }
        // The last partial block may have gone in too: write single bytes until nothing more fits.
        try (OutputStream out = Files.newOutputStream(filler, StandardOpenOption.APPEND)) {
            while (true) {
                out.write(0);
                out.flush();
                written++;
            }
        } catch (IOException full) {
            // full to the byte
        }
        return written;
    }

    /** Deletes the file {@link #fill} wrote: the space is back. */
    public void free() throws IOException {
        if (filler != null) {
            Files.deleteIfExists(filler);
            filler = null;
        }
    }

    /** Unmounts it (lazily, should a file in it still be open). */
    @Override
    public void close() {
        Result unmounted = run(List.of("umount", mountPoint.toString()));
        if (unmounted.status() != 0) {
            Result lazily = run(List.of("umount", "-l", mountPoint.toString()));
            if (lazily.status() != 0) {
                throw new IllegalStateException("cannot unmount the test tmpfs at " + mountPoint + ": "
                        + unmounted.output().strip() + " / " + lazily.output().strip());
            }
        }
    }

    private record Result(int status, String output) {
    }

    private static Result run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Result(-1, String.join(" ", command) + " did not finish within 30 s");
            }
            return new Result(process.exitValue(), output);
        } catch (IOException e) {
            return new Result(-1, String.join(" ", command) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }
}
