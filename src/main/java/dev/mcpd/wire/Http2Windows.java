package dev.mcpd.wire;

/**
 * HTTP/2 flow-control windows for mcpd's servers and the relay's upstream clients. With HTTP/2's default of 64 KiB
 * per connection, a peer 200 ms away can send only 64 KiB per round trip however many requests are in flight;
 * 16 MiB per connection and 1 MiB per stream (a whole relay batch) keep a long link full. A stream still carries no more than its reader has taken, so a slow reader of one large body
 * holds at most 1 MiB of it unread.
 */
public final class Http2Windows {

    public static final int CONNECTION = 16 * 1024 * 1024;
    public static final int STREAM = 1024 * 1024;

    private Http2Windows() {
    }
}
