package dev.mcpd.wire;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The key the relay gives a request that came without an {@code Idempotency-Key}: {@code relay-} + hex SHA-256 of the
 * request target, the content encoding and the body, so the same bytes sent again get the same key. The fields are
 * separated by a NUL byte, which neither of the first two can contain, so two different requests cannot hash the same
 * input. The target includes the query: two requests that differ only in their query are different requests.
 */
public final class DerivedIdempotencyKey {

    private DerivedIdempotencyKey() {
    }

    public static String of(String target, String contentEncoding, byte[] body) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        sha256.update(target.getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);
        sha256.update(contentEncoding.getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);
        sha256.update(body);
        return "relay-" + HexFormat.of().formatHex(sha256.digest());
    }
}
