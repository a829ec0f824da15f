package dev.mcpd.upstream;

/** Delivery of an entry was given up because the relay is stopping; the entry stays in the spool. */
public final class DeliveryStopped extends RuntimeException {
    public DeliveryStopped() {
        super("the relay is stopping", null, false, false);
    }
}
