package dev.mcpd.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.CopyOption;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import org.apache.lucene.tests.mockfile.FilterFileSystemProvider;

/**
 * A file system for the code under test whose every change goes through a {@link VolatileLayer}: paths from
 * {@link #root} are ordinary {@link Path}s to the code ({@code Files}, {@code FileChannel.open}, directory listings),
 * and a test can cut the power at any sync and open the code again on what survived. The plumbing (wrapped paths,
 * listings, attributes) is Lucene's mock file system; what is modelled here is what changes a directory or a file.
 * Copies, links and writable mappings are not modelled and fail.
 */
public final class PowerCutFileSystem extends FilterFileSystemProvider {

    private final VolatileLayer layer;

    private PowerCutFileSystem(VolatileLayer layer) {
        super("powercut://", FileSystems.getDefault());
        this.layer = layer;
    }

    /** A file system over the real directory {@code backing} (made if missing; what it holds counts as synced). */
    public static PowerCutFileSystem over(Path backing) throws IOException {
        Files.createDirectories(backing);
        return new PowerCutFileSystem(new VolatileLayer(backing));
    }

    public VolatileLayer layer() {
        return layer;
    }

    /** The backing directory, as a path of this file system. */
    public Path root() {
        return wrapPath(layer.backing());
    }

    @Override
    public void createDirectory(Path dir, FileAttribute<?>... attributes) throws IOException {
        layer.createDirectory(toDelegate(dir), attributes);
    }

    @Override
    public void delete(Path path) throws IOException {
        layer.delete(toDelegate(path));
    }

    @Override
    public boolean deleteIfExists(Path path) throws IOException {
        if (!Files.exists(toDelegate(path), LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        layer.delete(toDelegate(path));
        return true;
    }

    @Override
    public void move(Path source, Path target, CopyOption... options) throws IOException {
        layer.move(toDelegate(source), toDelegate(target), options);
    }

    @Override
    public FileChannel newFileChannel(Path path, Set<? extends OpenOption> options, FileAttribute<?>... attributes)
            throws IOException {
        return layer.open(toDelegate(path), options, attributes);
    }

    @Override
    public SeekableByteChannel newByteChannel(Path path, Set<? extends OpenOption> options,
                                              FileAttribute<?>... attributes) throws IOException {
        return newFileChannel(path, options, attributes);
    }

    @Override
    public InputStream newInputStream(Path path, OpenOption... options) throws IOException {
        return Channels.newInputStream(newFileChannel(path, Set.of(options.length == 0
                ? new OpenOption[] {StandardOpenOption.READ} : options)));
    }

    @Override
    public OutputStream newOutputStream(Path path, OpenOption... options) throws IOException {
        Set<OpenOption> opening = new HashSet<>(options.length == 0
                ? List.of(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING) : List.of(options));
        opening.add(StandardOpenOption.WRITE);
        return Channels.newOutputStream(newFileChannel(path, opening));
    }

    @Override
    public void copy(Path source, Path target, CopyOption... options) {
        throw new UnsupportedOperationException("copies are not modelled by the power-cut file system");
    }

    @Override
    public void createLink(Path link, Path existing) {
        throw new UnsupportedOperationException("links are not modelled by the power-cut file system");
    }

    @Override
    public void createSymbolicLink(Path link, Path target, FileAttribute<?>... attributes) {
        throw new UnsupportedOperationException("links are not modelled by the power-cut file system");
    }

    @Override
    public AsynchronousFileChannel newAsynchronousFileChannel(Path path, Set<? extends OpenOption> options,
                                                              ExecutorService executor,
                                                              FileAttribute<?>... attributes) {
        throw new UnsupportedOperationException("asynchronous channels are not modelled by the power-cut file system");
    }
}
