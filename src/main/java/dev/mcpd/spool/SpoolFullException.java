package dev.mcpd.spool;

/** The spool is at its bound ({@code --spool-max-bytes}): the sender must hold the request and retry. */
public class SpoolFullException extends RuntimeException {
    public SpoolFullException(long maxBytes) {
        super("the spool is full (" + maxBytes + " bytes)", null, false, false);
    }
}
