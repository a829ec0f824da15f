package dev.mcpd.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.CopyOption;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.lucene.tests.mockfile.FilterFileChannel;

/**
 * A disk through a power cut, modelled as LazyFS and SQLite's crash tests model it: what was not synced may be lost.
 * Files and directories live in a real directory (the backing directory) and every change to them goes through this
 * layer — in-process through {@link PowerCutFileSystem}, from another process through {@link PowerCutFuse} — which
 * keeps, beside the real state, what a power cut would leave:
 *
 * <ul>
 *   <li>for each directory, its names as of its last fsync, and the changes made since (creates, renames, removals);
 *   <li>for each file, its bytes as of its last fsync (its length then, and a copy of those bytes once a later write
 *       or truncation reached below that length).
 * </ul>
 *
 * A power cut ({@link #cut}) stops the layer at once — every later change fails, as the process would have died — and
 * computes what survives: every directory's synced names, plus, as a {@link CutPlan} says, a random subset of the
 * changes not synced (the journal wrote some of them, in any order: a rename is kept or lost whole), and each file's
 * synced bytes, plus, as the plan says, a torn prefix of the bytes written after them (or as many zeros: the size
 * reached the disk, the data did not). {@link Survivors#writeTo} lays that out in a fresh directory, where the code
 * under test starts again. Syncing a file never makes its name durable, nor syncing a directory its files' bytes:
 * what POSIX promises, not what ext4 usually does.
 */
public final class VolatileLayer {

    /** What a power cut keeps of what was not synced. */
    public record CutPlan(long seed, double keepUnsyncedChanges, boolean tornTails, boolean zeroTails) {

        /** Nothing that was not synced survives. */
        public static CutPlan dropAll() {
            return new CutPlan(0, 0, false, false);
        }

        /** A random subset of the unsynced directory changes and torn tails, by {@code seed}. */
        public static CutPlan random(long seed) {
            SplittableRandom random = new SplittableRandom(seed);
            return new CutPlan(seed, random.nextDouble(), random.nextBoolean(), random.nextInt(4) == 0);
        }
    }

    /** A sync the code asked for: the n-th since the layer was made, of a file or of a directory. */
    public record SyncPoint(int number, Path path, boolean directory) {
    }

    private abstract static sealed class Node permits FileNode, DirNode {
    }

    private static final class FileNode extends Node {
        /** Where its bytes are now: its place in the backing tree, or its link in the graveyard once it is unlinked. */
        Path real;
        /** Bytes [0, syncedLength) survive a power cut: as the real file holds them, unless {@link #syncedCopy}. */
        long syncedLength;
        /** The synced bytes, copied when a write or truncation since the last sync reached below syncedLength. */
        byte[] syncedCopy;

        FileNode(Path real) {
            this.real = real;
        }
    }

    private static final class DirNode extends Node {
        final Map<String, Node> now = new HashMap<>();
        Map<String, Node> synced = new HashMap<>();
        /** The change that last made each name what it is now, for the names changed since the last sync. */
        final Map<String, Long> changedBy = new HashMap<>();
    }

    private final Path backing;
    private final Path graveyard;
    private final DirNode root = new DirNode();
    private long changes;
    private long graves;
    private int syncs;
    private Predicate<SyncPoint> cutAt = sync -> false;
    private CutPlan plan = CutPlan.dropAll();
    private Survivors survivors;

    /**
     * A layer over {@code backing}, whose present contents count as synced; unlinked files are kept (as hard links)
     * in a sibling directory, for as long as a power cut could bring them back.
     */
    public VolatileLayer(Path backing) throws IOException {
        this.backing = backing.toAbsolutePath().normalize();
        this.graveyard = this.backing.resolveSibling("." + this.backing.getFileName() + ".unlinked");
        Files.createDirectories(graveyard);
        adoptExisting(this.backing, root);
    }

    private void adoptExisting(Path dir, DirNode node) throws IOException {
        try (Stream<Path> children = Files.list(dir)) {
            for (Path child : children.toList()) {
                Node adopted;
                if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
                    DirNode sub = new DirNode();
                    adoptExisting(child, sub);
                    adopted = sub;
                } else {
                    FileNode file = new FileNode(child);
                    file.syncedLength = Files.size(child);
                    adopted = file;
                }
                node.now.put(child.getFileName().toString(), adopted);
            }
        }
        node.synced = new HashMap<>(node.now);
    }

    public Path backing() {
        return backing;
    }

    /** From now on, the power goes at the first sync that {@code when} accepts, instead of that sync. */
    public synchronized void cutAt(Predicate<SyncPoint> when, CutPlan plan) {
        this.cutAt = when;
        this.plan = plan;
    }

    /** Syncs asked for so far. */
    public synchronized int syncs() {
        return syncs;
    }

    /** Whether the power is off. */
    public synchronized boolean isOff() {
        return survivors != null;
    }

    /** Cuts the power now, if it is still on, and returns what survives (the first cut's, if it is off already). */
    public synchronized Survivors cut(CutPlan plan) {
        if (survivors == null) {
            this.plan = plan;
            survivors = computeSurvivors();
        }
        return survivors;
    }

    /** What the cut left; throws if the power is still on. */
    public synchronized Survivors survivors() {
        if (survivors == null) {
            throw new IllegalStateException("the power was not cut");
        }
        return survivors;
    }

    // --- changes, each made on the real directory and recorded, under the layer's lock -------------------------------

    private void powerOn() throws IOException {
        if (survivors != null) {
            throw new IOException("Input/output error (the power is cut)");
        }
    }

    public synchronized void createDirectory(Path dir, FileAttribute<?>... attributes) throws IOException {
        powerOn();
        Files.createDirectory(dir, attributes);
        bind(dir, new DirNode(), ++changes);
    }

    /** Opens {@code file}: a channel whose writes, truncations and forces the layer sees. */
    public FileChannel open(Path file, Set<? extends OpenOption> options, FileAttribute<?>... attributes)
            throws IOException {
        boolean changes = options.contains(StandardOpenOption.WRITE) || options.contains(StandardOpenOption.APPEND);
        if (!changes) {
            FileChannel channel = FileChannel.open(file, options, attributes);
            synchronized (this) {
                return new Tracked(channel, lookup(file), file);
            }
        }
        synchronized (this) {
            powerOn();
            boolean existed = Files.exists(file, LinkOption.NOFOLLOW_LINKS);
            if (existed && options.contains(StandardOpenOption.CREATE_NEW)) {
                throw new FileAlreadyExistsException(file.toString());
            }
            Node node = existed ? lookup(file) : null;
            if (node instanceof FileNode known && options.contains(StandardOpenOption.TRUNCATE_EXISTING)) {
                reaching(known, 0);
            }
            FileChannel channel = FileChannel.open(file, options, attributes);
            if (!existed) {
                node = new FileNode(file);
                bind(file, node, ++this.changes);
            }
            return new Tracked(channel, node, file);
        }
    }

    /** Removes a file or an empty directory. */
    public synchronized void delete(Path path) throws IOException {
        powerOn();
        Node node = lookup(path);
        if (node instanceof FileNode file) {
            bury(file, path);
        }
        Files.delete(path);
        unbind(path, ++changes);
    }

    public synchronized void move(Path from, Path to, CopyOption... options) throws IOException {
        powerOn();
        Node node = lookup(from);
        Node replaced = Files.exists(to, LinkOption.NOFOLLOW_LINKS) ? lookup(to) : null;
        if (replaced instanceof FileNode file) {
            bury(file, to);
        }
        Files.move(from, to, options);
        long change = ++changes;
        unbind(from, change);
        bind(to, node, change);
        rebase(node, to);
    }

    /** fsync of a directory, by its path (FUSE's fsyncdir). */
    public synchronized void syncDirectory(Path dir) throws IOException {
        sync(lookup(dir), dir, null);
    }

    /**
     * fsync of what {@code node} is — {@code path} names it in a sync point; a file's {@code real} channel tells its
     * size. Fails, having done nothing, when the power is (or now goes) off.
     */
    private synchronized void sync(Node node, Path path, FileChannel real) throws IOException {
        powerOn();
        if (cutAt.test(new SyncPoint(++syncs, path, node instanceof DirNode))) {
            survivors = computeSurvivors();
            powerOn();
        }
        if (node instanceof DirNode directory) {
            directory.synced = new HashMap<>(directory.now);
            directory.changedBy.clear();
        } else if (node instanceof FileNode file) {
            file.syncedLength = real.size();
            file.syncedCopy = null;
        }
    }

    /** A write or truncation is about to change bytes from {@code position} on: the synced ones are kept first. */
    private void reaching(FileNode file, long position) throws IOException {
        if (position < file.syncedLength && file.syncedCopy == null) {
            byte[] copy = new byte[(int) file.syncedLength];
            try (FileChannel channel = FileChannel.open(file.real, StandardOpenOption.READ)) {
                ByteBuffer buffer = ByteBuffer.wrap(copy);
                while (buffer.hasRemaining() && channel.read(buffer, buffer.position()) >= 0) {
                    // until full
                }
            }
            file.syncedCopy = copy;
        }
    }

    /** Keeps an unlinked file's bytes reachable: a power cut may bring its name back. */
    private void bury(FileNode file, Path path) throws IOException {
        Path grave = graveyard.resolve(Long.toString(++graves));
        Files.createLink(grave, path);
        file.real = grave;
    }

    private void rebase(Node node, Path to) {
        if (node instanceof FileNode file) {
            file.real = to;
        } else if (node instanceof DirNode dir) {
            dir.now.forEach((name, child) -> rebase(child, to.resolve(name)));
        }
    }

    private Node lookup(Path path) throws NoSuchFileException {
        Path relative = relative(path);
        Node node = root;
        for (Path name : relative) {
            if (name.toString().isEmpty()) {
                continue;
            }
            if (!(node instanceof DirNode dir) || (node = dir.now.get(name.toString())) == null) {
                throw new NoSuchFileException(path + " (not known to the volatile layer)");
            }
        }
        return node;
    }

    private DirNode parentOf(Path path) throws NoSuchFileException {
        Path parent = path.toAbsolutePath().normalize().getParent();
        if (lookup(parent) instanceof DirNode dir) {
            return dir;
        }
        throw new NoSuchFileException(parent.toString());
    }

    private void bind(Path path, Node node, long change) throws NoSuchFileException {
        DirNode parent = parentOf(path);
        String name = path.getFileName().toString();
        parent.now.put(name, node);
        parent.changedBy.put(name, change);
    }

    private void unbind(Path path, long change) throws NoSuchFileException {
        DirNode parent = parentOf(path);
        String name = path.getFileName().toString();
        parent.now.remove(name);
        parent.changedBy.put(name, change);
    }

    private Path relative(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        if (!absolute.startsWith(backing)) {
            throw new IllegalArgumentException(path + " is outside the volatile layer's " + backing);
        }
        return backing.relativize(absolute);
    }

    // --- what a power cut leaves ---------------------------------------------------------------------------------

    private Survivors computeSurvivors() {
        SplittableRandom random = new SplittableRandom(plan.seed()); // well mixed even for seeds 1, 2, 3…
        Map<Long, Boolean> kept = new HashMap<>();
        Survivors.Dir top = new Survivors.Dir(new TreeMap<>());
        survive(root, top, random, kept);
        return new Survivors(top, plan);
    }

    private void survive(DirNode dir, Survivors.Dir into, SplittableRandom random, Map<Long, Boolean> kept) {
        List<String> names = new ArrayList<>(dir.synced.keySet());
        dir.changedBy.keySet().stream().filter(name -> !dir.synced.containsKey(name)).forEach(names::add);
        names.sort(null); // the same plan on the same history makes the same image
        for (String name : names) {
            Long change = dir.changedBy.get(name);
            boolean applied = change != null && kept.computeIfAbsent(change,
                    unused -> random.nextDouble() < plan.keepUnsyncedChanges());
            Node node = applied ? dir.now.get(name) : dir.synced.get(name);
            if (node instanceof DirNode sub) {
                Survivors.Dir child = new Survivors.Dir(new TreeMap<>());
                survive(sub, child, random, kept);
                into.entries().put(name, child);
            } else if (node instanceof FileNode file) {
                into.entries().put(name, survivingFile(file, random));
            }
        }
    }

    private Survivors.File survivingFile(FileNode file, SplittableRandom random) {
        long size;
        try {
            size = Files.size(file.real);
        } catch (IOException e) {
            size = 0;
        }
        long unsynced = file.syncedCopy == null ? Math.max(0, size - file.syncedLength) : 0;
        long tail = plan.tornTails() && unsynced > 0 ? (long) (random.nextDouble() * (unsynced + 1)) : 0;
        boolean zeros = tail > 0 && plan.zeroTails() && random.nextBoolean();
        return new Survivors.File(file.real, file.syncedCopy, file.syncedLength, tail, zeros);
    }

    /** What a power cut left: a tree of directories and files, laid out with {@link #writeTo}. */
    public record Survivors(Dir root, CutPlan plan) {

        /** A surviving directory or file. */
        public sealed interface Entry permits Dir, File {
        }

        /** A directory's surviving entries, by name. */
        public record Dir(TreeMap<String, Entry> entries) implements Entry {
        }

        /**
         * A surviving file: its synced bytes ({@code copy}, or the first {@code length} of {@code real}), and then
         * {@code tail} bytes of what followed them unsynced, or as many zeros.
         */
        public record File(Path real, byte[] copy, long length, long tail, boolean zeros) implements Entry {
        }

        /** Lays the survivors out in {@code target} (made if missing): directories 0700, files 0600. */
        public void writeTo(Path target) throws IOException {
            Files.createDirectories(target);
            write(root, target);
        }

        private static final FileAttribute<Set<PosixFilePermission>> DIRECTORY =
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
        private static final FileAttribute<Set<PosixFilePermission>> FILE =
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

        private static void write(Dir dir, Path target) throws IOException {
            for (Map.Entry<String, Entry> entry : dir.entries().entrySet()) {
                Path path = target.resolve(entry.getKey());
                if (entry.getValue() instanceof Dir sub) {
                    Files.createDirectory(path, DIRECTORY);
                    write(sub, path);
                } else if (entry.getValue() instanceof File file) {
                    try (FileChannel out = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE), FILE)) {
                        if (file.copy() != null) {
                            out.write(ByteBuffer.wrap(file.copy()));
                        } else {
                            copy(file.real(), 0, file.length() + (file.zeros() ? 0 : file.tail()), out);
                        }
                        if (file.zeros()) {
                            out.write(ByteBuffer.allocate((int) file.tail()), out.size());
                        }
                    }
                }
            }
        }

        private static void copy(Path from, long position, long count, FileChannel out) throws IOException {
            try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ)) {
                long done = 0;
                while (done < count) {
                    long n = in.transferTo(position + done, count - done, out);
                    if (n <= 0) {
                        break; // shorter than recorded: what is there
                    }
                    done += n;
                }
            }
        }

        /** Every surviving file, by its path relative to the root. */
        public List<String> files() {
            List<String> files = new ArrayList<>();
            list(root, "", files);
            return files;
        }

        private static void list(Dir dir, String prefix, List<String> into) {
            dir.entries().forEach((name, value) -> {
                if (value instanceof Dir sub) {
                    list(sub, prefix + name + "/", into);
                } else {
                    into.add(prefix + name);
                }
            });
        }
    }

    // --- the channel the code writes through ---------------------------------------------------------------------

    /** A file's (or a directory's) channel whose changes and forces go through the layer. */
    private final class Tracked extends FilterFileChannel {
        private final Node node;
        private final Path path;

        Tracked(FileChannel delegate, Node node, Path path) {
            super(delegate);
            this.node = node;
            this.path = path;
        }

        private void writing(long position) throws IOException {
            powerOn();
            if (node instanceof FileNode file) {
                reaching(file, position);
            }
        }

        @Override
        public int write(ByteBuffer source) throws IOException {
            synchronized (VolatileLayer.this) {
                writing(delegate.position());
                return delegate.write(source);
            }
        }

        @Override
        public long write(ByteBuffer[] sources, int offset, int length) throws IOException {
            synchronized (VolatileLayer.this) {
                writing(delegate.position());
                return delegate.write(sources, offset, length);
            }
        }

        @Override
        public int write(ByteBuffer source, long position) throws IOException {
            synchronized (VolatileLayer.this) {
                writing(position);
                return delegate.write(source, position);
            }
        }

        @Override
        public long transferFrom(ReadableByteChannel source, long position, long count) throws IOException {
            synchronized (VolatileLayer.this) {
                writing(position);
                return delegate.transferFrom(source, position, count);
            }
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            synchronized (VolatileLayer.this) {
                writing(size);
                delegate.truncate(size);
                return this;
            }
        }

        @Override
        public void force(boolean metaData) throws IOException {
            sync(node, path, delegate);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            if (mode != MapMode.READ_ONLY) {
                throw new UnsupportedOperationException("writable mappings are not modelled by the volatile layer");
            }
            return delegate.map(mode, position, size);
        }
    }
}
