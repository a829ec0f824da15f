package dev.mcpd.store;

/** The store did not answer (down, unreachable, timed out): the sender must retry. */
public final class StoreUnavailable extends RuntimeException {
    public StoreUnavailable(String message, Throwable cause) {
        super(message, cause);
    }
}
