package dev.mcpd.spool;

/** A record whose framing, checksum or fields do not hold: a torn write or damage on disk. */
public class CorruptRecordException extends Exception {
    public CorruptRecordException(String message) {
        super(message);
    }
}
