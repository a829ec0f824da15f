package dev.mcpd.wire;

/**
 * RFC 9110 field content (section 5.5): no control character but a tab. A value kept to be sent upstream as a header
 * must be one; HTTP/1.1's parser refuses a CR or LF in a header itself, but HTTP/2 carries any byte in a value.
 */
public final class FieldContent {

    private FieldContent() {
    }

    public static boolean isValid(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return false;
            }
        }
        return true;
    }
}
