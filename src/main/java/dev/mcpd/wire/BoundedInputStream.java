package dev.mcpd.wire;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Gives at most {@code limit} bytes of a stream — a body being inflated, say — and throws {@link Exceeded} as soon as
 * a read would pass them, so what a gzip bomb claims is never read further than the limit.
 */
public final class BoundedInputStream extends FilterInputStream {

    /** The stream held more than the limit. */
    public static final class Exceeded extends IOException {
        Exceeded() {
            super(null, null);
        }
    }

    private long left;

    public BoundedInputStream(InputStream in, long limit) {
        super(in);
        this.left = limit;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0 && --left < 0) {
            throw new Exceeded();
        }
        return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        // One byte past the limit is enough to know it was passed: never ask the stream for more.
        int n = super.read(buffer, offset, (int) Math.min(length, Math.max(1, left + 1)));
        if (n > 0) {
            left -= n;
            if (left < 0) {
                throw new Exceeded();
            }
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        return super.skip(Math.min(n, Math.max(0, left)));
    }
}
