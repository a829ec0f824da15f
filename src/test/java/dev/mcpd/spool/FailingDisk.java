package dev.mcpd.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A disk that fails on demand, for the spool's write paths: once {@link #failWritesAfter} bytes more were written, every
 * write fails as a full disk does ({@code No space left on device}), part of the bytes written first; with
 * {@link #failForces}, every {@code fdatasync} fails as a broken disk does. No root, no small file system needed.
 */
final class FailingDisk implements WriteChannels {

    private final AtomicLong writableBytes = new AtomicLong(Long.MAX_VALUE);
    private final AtomicBoolean forcesFail = new AtomicBoolean();

    /** From now on, {@code bytes} more may be written; then writes fail. */
    void failWritesAfter(long bytes) {
        writableBytes.set(bytes);
    }

    void failForces(boolean fail) {
        forcesFail.set(fail);
    }

    /** Writes and forces work again. */
    void heal() {
        writableBytes.set(Long.MAX_VALUE);
        forcesFail.set(false);
    }

    @Override
    public FileChannel wrap(Path file, FileChannel opened) {
        return new Failing(opened);
    }

    private final class Failing extends FileChannel {
        private final FileChannel channel;

        Failing(FileChannel channel) {
            this.channel = channel;
        }

        /** How much of {@code wanted} may still be written; throws when nothing may. */
        private int allowance(int wanted) throws IOException {
            long left = writableBytes.get();
            if (left <= 0) {
                throw new IOException("No space left on device");
            }
            int allowed = (int) Math.min(wanted, left);
            writableBytes.addAndGet(-allowed);
            return allowed;
        }

        private int writeSome(ByteBuffer source, long at) throws IOException {
            int allowed = allowance(source.remaining());
            ByteBuffer part = source.slice(source.position(), allowed);
            int written = at < 0 ? channel.write(part) : channel.write(part, at);
            source.position(source.position() + written);
            return written;
        }

        @Override
        public int write(ByteBuffer source) throws IOException {
            return writeSome(source, -1);
        }

        @Override
        public long write(ByteBuffer[] sources, int offset, int length) throws IOException {
            long written = 0;
            for (int i = offset; i < offset + length; i++) {
                while (sources[i].hasRemaining()) {
                    written += writeSome(sources[i], -1);
                }
            }
            return written;
        }

        @Override
        public int write(ByteBuffer source, long position) throws IOException {
            return writeSome(source, position);
        }

        @Override
        public void force(boolean metaData) throws IOException {
            if (forcesFail.get()) {
                throw new IOException("Input/output error");
            }
            channel.force(metaData);
        }

        @Override
        public int read(ByteBuffer destination) throws IOException {
            return channel.read(destination);
        }

        @Override
        public long read(ByteBuffer[] destinations, int offset, int length) throws IOException {
            return channel.read(destinations, offset, length);
        }

        @Override
        public int read(ByteBuffer destination, long position) throws IOException {
            return channel.read(destination, position);
        }

        @Override
        public long position() throws IOException {
            return channel.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            channel.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return channel.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            channel.truncate(size);
            return this;
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return channel.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel source, long position, long count) throws IOException {
            throw new IOException("not used by the spool");
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return channel.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return channel.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return channel.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            channel.close();
        }
    }
}
