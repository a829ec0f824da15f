package dev.mcpd.spool;

/** An entry could not be made durable; nothing of it is kept, and the sender must be told to retry. */
public class SpoolWriteException extends RuntimeException {
    public SpoolWriteException(String message) {
        super(message);
    }

    public SpoolWriteException(String message, Throwable cause) {
        super(message, cause);
    }
}
