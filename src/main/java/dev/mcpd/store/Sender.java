package dev.mcpd.store;

import dev.mcpd.wire.SenderDigest;

/**
 * Whose idempotency keys a request's are: the credential it presented, kept in the store only as its SHA-256, so
 * two senders that pick the same key never swallow each other's batches. The credential is the Bearer token of
 * {@code Authorization} (or that header's whole value when it is another scheme), else {@code x-mcpd-key}; a request
 * with neither belongs to the sender {@link #NONE}. Behind {@code --ingest-key} the credential is the key that was
 * verified, however it was presented ({@code collector.RequestSender} reads it from a request).
 *
 * @param id the hex SHA-256 of the credential; "" for none
 */
public record Sender(String id) {

    /** Requests that presented no credential. */
    public static final Sender NONE = new Sender("");
    /** Keys stored before keys belonged to senders: such a key is recognised whoever presents it again. */
    static final String ANY = "*";

    /** The sender presenting this credential. */
    public static Sender presenting(String credential) {
        return new Sender(SenderDigest.of(credential));
    }

    static byte[] sha256(byte[] bytes) {
        return SenderDigest.sha256(bytes);
    }
}
