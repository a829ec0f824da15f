package dev.mcpd.wire;

/**
 * The {@code Idempotency-Key} a sender may give, as both roles take it: 1 to {@value #MAX_LENGTH} visible
 * ASCII characters. Anything else is refused with 400 rather than rewritten, so that no upstream ever sees a key the
 * sender did not choose, and no key can carry a line break into a header.
 */
public final class SenderIdempotencyKey {

    public static final String HEADER = "Idempotency-Key";
    public static final int MAX_LENGTH = 255;
    /** The one-line reason of the refusal. */
    public static final String RULE = HEADER + " must be 1 to " + MAX_LENGTH + " visible ASCII characters";

    private SenderIdempotencyKey() {
    }

    public static boolean isValid(String key) {
        if (key.isEmpty() || key.length() > MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }
}
