package dev.mcpd.wire;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Whose idempotency keys a request's are, as a collector names a sender: the SHA-256 (hex) of the credential it
 * presented — the Bearer token of {@code Authorization} (or that header's whole value for another scheme), else
 * {@code x-mcpd-key}. Only the digest travels (in a Kafka record's {@link KafkaRecordHeaders#SENDER}) or is stored;
 * the credential never does.
 */
public final class SenderDigest {

    private static final int HEX_LENGTH = 64;

    private SenderDigest() {
    }

    /** The credential a header presents: a Bearer token alone, any other value whole. */
    public static String credentialOf(String header, String value) {
        if (header.equalsIgnoreCase("Authorization") && value.length() >= 7
                && value.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return value.substring(7).trim();
        }
        return value;
    }

    /** The hex SHA-256 of a credential's UTF-8 bytes. */
    public static String of(String credential) {
        return HexFormat.of().formatHex(sha256(credential.getBytes(StandardCharsets.UTF_8)));
    }

    /** Whether {@code text} is such a digest: 64 lowercase hex digits. */
    public static boolean isDigest(String text) {
        return text.length() == HEX_LENGTH && text.equals(text.toLowerCase(Locale.ROOT))
                && text.chars().allMatch(c -> Character.digit(c, 16) >= 0);
    }

    public static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
