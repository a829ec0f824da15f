package dev.mcpd.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * A key (sender key, upstream key) that must never reach a log line, a metric or {@code mcpd config}:
 * {@link #toString()} hides it, and only {@link #reveal()} — called where the key is actually sent —
 * gives it out.
 */
public final class Secret {
    private final String key;
    private final byte[] digest;

    private Secret(String key) {
        this.key = key;
        this.digest = sha256(key);
    }

    /**
     * @throws IllegalArgumentException when the key is empty: an empty key would let every sender in
     */
    public static Secret of(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("the key is empty");
        }
        return new Secret(key);
    }

    /**
     * Whether a presented key equals this one, in time that does not depend on where they differ nor on
     * the presented key's length: both are hashed first and the digests compared with
     * {@link MessageDigest#isEqual}, so a sender cannot guess the key byte by byte from response times.
     */
    public boolean matches(String presented) {
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(digest, sha256(presented));
    }

    /** The key itself, for the one place that sends it (an {@code Authorization} header). */
    public String reveal() {
        return key;
    }

    @Override
    public String toString() {
        return "[secret]";
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Secret that && MessageDigest.isEqual(digest, that.digest);
    }

    @Override
    public int hashCode() {
        // Derived from the digest, not the key, so a hash table dump shows nothing useful.
        return Arrays.hashCode(digest);
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException impossible) {
            // Every Java platform must provide SHA-256.
            throw new IllegalStateException(impossible);
        }
    }
}
