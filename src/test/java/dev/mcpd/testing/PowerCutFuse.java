package dev.mcpd.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import jnr.ffi.Pointer;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import org.awaitility.Awaitility;
import ru.serce.jnrfuse.ErrorCodes;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * The {@link VolatileLayer} as a FUSE file system, for code that runs in another process (the packaged relay): a
 * pass-through to the layer's backing directory in which every change goes through the layer, so that a test can cut
 * the power under a running process exactly as {@link PowerCutFileSystem} does in-process — then kill it, unmount, lay
 * out what survived and start it again there. Served from the test's JVM with libfuse 2 (jnr-fuse); owners, modes and
 * locks are the backing directory's and the kernel's ({@code default_permissions}).
 */
public final class PowerCutFuse extends FuseStubFS {

    private static final int O_ACCMODE = 03;
    private static final int O_WRONLY = 01;
    private static final int O_RDWR = 02;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_TRUNC = 01000;
    private static final int O_APPEND = 02000;

    private final VolatileLayer layer;
    private final Path mountPoint;
    private final Map<Long, FileChannel> handles = new ConcurrentHashMap<>();
    private final AtomicLong nextHandle = new AtomicLong();

    private PowerCutFuse(VolatileLayer layer, Path mountPoint) {
        this.layer = layer;
        this.mountPoint = mountPoint;
    }

    /**
     * Why FUSE cannot be used here (no {@code /dev/fuse}, no libfuse 2, not root), or empty when it can: a test that
     * needs it is skipped with this reason.
     */
    public static Optional<String> unavailable() {
        if (!Files.isReadable(Path.of("/dev/fuse")) || !Files.isWritable(Path.of("/dev/fuse"))) {
            return Optional.of("no usable /dev/fuse (a container without the FUSE device)");
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            return Optional.of("mounting a FUSE file system without fusermount needs root");
        }
        if (Stream.of("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/usr/lib")
                .noneMatch(dir -> Files.exists(Path.of(dir, "libfuse.so.2")))) {
            return Optional.of("libfuse 2 is missing (Debian: apt-get install libfuse2)");
        }
        return Optional.empty();
    }

    /** Mounts {@code layer} at {@code mountPoint} (made if missing) and returns once the mount is there. */
    public static PowerCutFuse mount(VolatileLayer layer, Path mountPoint) throws IOException {
        Files.createDirectories(mountPoint);
        PowerCutFuse fuse = new PowerCutFuse(layer, mountPoint);
        // attr and entry caches off: the kernel asks each time, so nothing stale outlives a change
        fuse.mount(mountPoint, false, false, new String[] {"-o", "default_permissions,attr_timeout=0,entry_timeout=0"});
        Awaitility.await("the FUSE file system at " + mountPoint).atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(20)).until(() -> mounted(mountPoint));
        return fuse;
    }

    private static boolean mounted(Path mountPoint) throws IOException {
        String target = " " + mountPoint.toAbsolutePath() + " ";
        return Files.readAllLines(Path.of("/proc/mounts")).stream().anyMatch(line -> line.contains(target));
    }

    /** Unmounts (lazily: a killed process's last handles may linger a moment) and waits until it is gone. */
    public void unmount() throws IOException, InterruptedException {
        Process umount = new ProcessBuilder("umount", "-l", mountPoint.toAbsolutePath().toString())
                .redirectErrorStream(true).start();
        String output = new String(umount.getInputStream().readAllBytes());
        if (umount.waitFor() != 0 && mounted(mountPoint)) {
            throw new IOException("umount " + mountPoint + ": " + output.strip());
        }
        handles.values().forEach(channel -> {
            try {
                channel.close();
            } catch (IOException e) {
                // the layer's channels: the power is off, or the file is gone
            }
        });
        handles.clear();
    }

    public VolatileLayer layer() {
        return layer;
    }

    private Path real(String path) {
        return path.equals("/") ? layer.backing() : layer.backing().resolve(path.substring(1));
    }

    private static int errno(IOException e) {
        if (e instanceof NoSuchFileException) {
            return -ErrorCodes.ENOENT();
        }
        if (e instanceof FileAlreadyExistsException) {
            return -ErrorCodes.EEXIST();
        }
        if (e instanceof DirectoryNotEmptyException) {
            return -ErrorCodes.ENOTEMPTY();
        }
        if (e instanceof NotDirectoryException) {
            return -ErrorCodes.ENOTDIR();
        }
        if (e instanceof AccessDeniedException) {
            return -ErrorCodes.EACCES();
        }
        return -ErrorCodes.EIO(); // the power is cut, or the backing disk failed
    }

    @FunctionalInterface
    private interface Operation {
        int run() throws IOException;
    }

    private static int call(Operation operation) {
        try {
            return operation.run();
        } catch (IOException e) {
            return errno(e);
        } catch (RuntimeException e) {
            return -ErrorCodes.EIO();
        }
    }

    private static FileAttribute<Set<PosixFilePermission>> mode(long mode) {
        StringBuilder bits = new StringBuilder();
        String letters = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            bits.append((mode & (1L << (8 - i))) != 0 ? letters.charAt(i) : '-');
        }
        return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(bits.toString()));
    }

    private static Set<OpenOption> options(int flags) {
        Set<OpenOption> options = new HashSet<>();
        int access = flags & O_ACCMODE;
        options.add(StandardOpenOption.READ);
        if (access == O_WRONLY || access == O_RDWR) {
            options.add(StandardOpenOption.WRITE);
        }
        if ((flags & O_CREAT) != 0) {
            options.add((flags & O_EXCL) != 0 ? StandardOpenOption.CREATE_NEW : StandardOpenOption.CREATE);
        }
        if ((flags & O_TRUNC) != 0) {
            options.add(StandardOpenOption.TRUNCATE_EXISTING);
        }
        if ((flags & O_APPEND) != 0) {
            options.add(StandardOpenOption.APPEND);
            options.remove(StandardOpenOption.READ); // Java refuses READ with APPEND; the kernel reads by offset
        }
        return options;
    }

    private long keep(FileChannel channel) {
        long handle = nextHandle.incrementAndGet();
        handles.put(handle, channel);
        return handle;
    }

    private FileChannel handle(FuseFileInfo fi) throws IOException {
        FileChannel channel = handles.get(fi.fh.get());
        if (channel == null) {
            throw new IOException("unknown file handle " + fi.fh.get());
        }
        return channel;
    }

    @Override
    public int getattr(String path, FileStat stat) {
        return call(() -> {
            Map<String, Object> a = Files.readAttributes(real(path), "unix:*", LinkOption.NOFOLLOW_LINKS);
            stat.st_mode.set((Integer) a.get("mode"));
            stat.st_nlink.set((Integer) a.get("nlink"));
            stat.st_uid.set((Integer) a.get("uid"));
            stat.st_gid.set((Integer) a.get("gid"));
            stat.st_size.set((Long) a.get("size"));
            stat.st_ino.set((Long) a.get("ino"));
            stat.st_blksize.set(4096);
            stat.st_blocks.set(((Long) a.get("size") + 511) / 512);
            time(stat.st_mtim, (FileTime) a.get("lastModifiedTime"));
            time(stat.st_atim, (FileTime) a.get("lastAccessTime"));
            time(stat.st_ctim, (FileTime) a.get("ctime"));
            return 0;
        });
    }

    private static void time(Timespec into, FileTime time) {
        long nanos = time.to(TimeUnit.NANOSECONDS);
        into.tv_sec.set(Math.floorDiv(nanos, 1_000_000_000L));
        into.tv_nsec.set(Math.floorMod(nanos, 1_000_000_000L));
    }

    @Override
    public int readdir(String path, Pointer buf, FuseFillDir filter, @off_t long offset, FuseFileInfo fi) {
        return call(() -> {
            filter.apply(buf, ".", null, 0);
            filter.apply(buf, "..", null, 0);
            try (Stream<Path> children = Files.list(real(path))) {
                for (Path child : children.toList()) {
                    filter.apply(buf, child.getFileName().toString(), null, 0);
                }
            }
            return 0;
        });
    }

    @Override
    public int mkdir(String path, long mode) {
        return call(() -> {
            layer.createDirectory(real(path), mode(mode));
            return 0;
        });
    }

    @Override
    public int unlink(String path) {
        return call(() -> {
            layer.delete(real(path));
            return 0;
        });
    }

    @Override
    public int rmdir(String path) {
        return call(() -> {
            layer.delete(real(path));
            return 0;
        });
    }

    @Override
    public int rename(String from, String to) {
        return call(() -> {
            layer.move(real(from), real(to), StandardCopyOption.ATOMIC_MOVE);
            return 0;
        });
    }

    @Override
    public int create(String path, long mode, FuseFileInfo fi) {
        return call(() -> {
            Set<OpenOption> options = options(fi.flags.get());
            options.add(StandardOpenOption.CREATE);
            options.add(StandardOpenOption.WRITE);
            fi.fh.set(keep(layer.open(real(path), options, mode(mode))));
            return 0;
        });
    }

    @Override
    public int open(String path, FuseFileInfo fi) {
        return call(() -> {
            fi.fh.set(keep(layer.open(real(path), options(fi.flags.get()))));
            return 0;
        });
    }

    @Override
    public int opendir(String path, FuseFileInfo fi) {
        return Files.isDirectory(real(path)) ? 0 : -ErrorCodes.ENOENT();
    }

    @Override
    public int read(String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
        return call(() -> {
            ByteBuffer bytes = ByteBuffer.allocate((int) size);
            FileChannel channel = handle(fi);
            while (bytes.hasRemaining()) {
                int n = channel.read(bytes, offset + bytes.position());
                if (n < 0) {
                    break;
                }
            }
            buf.put(0, bytes.array(), 0, bytes.position());
            return bytes.position();
        });
    }

    @Override
    public int write(String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
        return call(() -> {
            byte[] bytes = new byte[(int) size];
            buf.get(0, bytes, 0, bytes.length);
            ByteBuffer source = ByteBuffer.wrap(bytes);
            FileChannel channel = handle(fi);
            while (source.hasRemaining()) {
                channel.write(source, offset + source.position());
            }
            return bytes.length;
        });
    }

    @Override
    public int truncate(String path, @off_t long size) {
        return call(() -> {
            try (FileChannel channel = layer.open(real(path), EnumSet.of(StandardOpenOption.WRITE))) {
                channel.truncate(size);
            }
            return 0;
        });
    }

    @Override
    public int ftruncate(String path, @off_t long size, FuseFileInfo fi) {
        return call(() -> {
            handle(fi).truncate(size);
            return 0;
        });
    }

    @Override
    public int fsync(String path, int isdatasync, FuseFileInfo fi) {
        return call(() -> {
            handle(fi).force(isdatasync == 0);
            return 0;
        });
    }

    @Override
    public int fsyncdir(String path, FuseFileInfo fi) {
        return call(() -> {
            layer.syncDirectory(real(path));
            return 0;
        });
    }

    @Override
    public int flush(String path, FuseFileInfo fi) {
        return 0;
    }

    @Override
    public int release(String path, FuseFileInfo fi) {
        return call(() -> {
            FileChannel channel = handles.remove(fi.fh.get());
            if (channel != null) {
                channel.close();
            }
            return 0;
        });
    }

    @Override
    public int releasedir(String path, FuseFileInfo fi) {
        return 0;
    }

    @Override
    public int access(String path, int mask) {
        return Files.exists(real(path), LinkOption.NOFOLLOW_LINKS) ? 0 : -ErrorCodes.ENOENT();
    }

    @Override
    public int chmod(String path, long mode) {
        return call(() -> {
            Files.setPosixFilePermissions(real(path), mode(mode).value());
            return 0;
        });
    }

    @Override
    public int utimens(String path, Timespec[] timespec) {
        return call(() -> {
            long seconds = timespec[1].tv_sec.get();
            Files.setLastModifiedTime(real(path), FileTime.from(Instant.ofEpochSecond(seconds,
                    timespec[1].tv_nsec.longValue())));
            return 0;
        });
    }

    @Override
    public int statfs(String path, Statvfs stbuf) {
        return call(() -> {
            FileStore store = Files.getFileStore(layer.backing());
            stbuf.f_bsize.set(4096);
            stbuf.f_frsize.set(4096);
            stbuf.f_blocks.set(store.getTotalSpace() / 4096);
            stbuf.f_bfree.set(store.getUnallocatedSpace() / 4096);
            stbuf.f_bavail.set(store.getUsableSpace() / 4096);
            stbuf.f_namemax.set(255);
            return 0;
        });
    }

    /** The mount's path (what the process under test is given). */
    public Path mountPoint() {
        return mountPoint;
    }

    /** Files open through the mount now (tests: none is left once the process using them is gone). */
    public List<Long> openHandles() {
        return List.copyOf(handles.keySet());
    }
}
