package dev.mcpd.config;

import java.time.Duration;
import java.util.Objects;

/**
 * Where mcpd listens, and what it reads of a request: {@code mcpd config}'s {@code listen} line.
 *
 * @param address        ingest, probes and metrics address ({@code --listen})
 * @param maxBodyBytes   larger request bodies get 413 ({@code --max-body-bytes})
 * @param requestTimeout a request not fully read in time gets 408 ({@code --request-timeout-seconds})
 */
public record Listener(ListenAddress address, long maxBodyBytes, Duration requestTimeout) {

    /** The most one request body may be: a body is held in memory whole, and a spool record holds at most 2 GiB. */
    public static final long MAX_BODY_CEILING = ByteSize.GIB;
    /** A day: longer is surely a mistake, and keeps the timeout safe to convert to milliseconds. */
    public static final long MAX_REQUEST_TIMEOUT_SECONDS = 86_400;

    public Listener {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        long bytes = maxBodyBytes;
        Duration timeout = requestTimeout;
        OptionValues.check(Options.MAX_BODY_BYTES, () -> checkMaxBodyBytesFits(checkMaxBodyBytes(bytes),
                Runtime.getRuntime().maxMemory()));
        OptionValues.check(Options.REQUEST_TIMEOUT_SECONDS, () -> checkRequestTimeout(timeout));
    }

    static long checkMaxBodyBytes(long bytes) {
        OptionValues.atLeastOneByte(bytes);
        if (bytes > MAX_BODY_CEILING) {
            throw new IllegalArgumentException(ByteSize.format(bytes) + " is more than a body can be: at most "
                    + ByteSize.format(MAX_BODY_CEILING) + " (a body is held in memory whole)");
        }
        return bytes;
    }

    /**
     * Bodies in memory may take a quarter of the heap (one body always may): a body larger than that quarter
     * would only be taken when no other is read, or not at all.
     */
    static long checkMaxBodyBytesFits(long bytes, long maxHeap) {
        if (bytes > maxHeap / 4) {
            throw new IllegalArgumentException(ByteSize.format(bytes) + " does not fit this process's heap of "
                    + maxHeap / ByteSize.MIB + " MiB: bodies may take a quarter of it; give it at least 4 × the body"
                    + " (MCPD_HEAP) or lower the limit");
        }
        return bytes;
    }

    static Duration checkRequestTimeout(Duration timeout) {
        if (timeout.compareTo(Duration.ofSeconds(1)) < 0
                || timeout.compareTo(Duration.ofSeconds(MAX_REQUEST_TIMEOUT_SECONDS)) > 0) {
            throw new IllegalArgumentException(timeout.toSeconds() + " seconds is out of range: use 1 to "
                    + MAX_REQUEST_TIMEOUT_SECONDS);
        }
        return timeout;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        return address + "; bodies up to " + ByteSize.format(maxBodyBytes) + ", read within "
                + requestTimeout.toSeconds() + " s";
    }
}
