package dev.mcpd.delivery;

/**
 * Protocol Buffers' wire format, read only as far as a merge by concatenation needs: whether a message is a run of
 * whole fields. Concatenating messages appends their fields only when each one ends where its own last field ends;
 * a message that ended inside a field — an open group, a length past its end — would swallow the fields of the
 * messages after it.
 */
final class ProtobufWire {

    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LENGTH_DELIMITED = 2;
    static final int START_GROUP = 3;
    static final int END_GROUP = 4;
    static final int FIXED32 = 5;

    private static final long MAX_FIELD_NUMBER = (1L << 29) - 1;
    /** Groups nested deeper than this are not read (protobuf's own parsers stop at 100). */
    private static final int MAX_GROUP_DEPTH = 100;

    private ProtobufWire() {
    }

    /**
     * Whether {@code message} is nothing but whole fields: every tag names a field number and a wire type that
     * exist, every value lies within the message, every group is closed by its own end tag, and nothing is left
     * open at its end. Unknown fields are whole fields too: they are not judged here.
     */
    static boolean wholeFields(byte[] message) {
        long[] openGroups = new long[MAX_GROUP_DEPTH];
        int depth = 0;
        int at = 0;
        while (at < message.length) {
            long[] tag = varint(message, at);
            if (tag == null) {
                return false;
            }
            long field = tag[0] >>> 3;
            if (field < 1 || field > MAX_FIELD_NUMBER) {
                return false;
            }
            at = (int) tag[1];
            switch ((int) (tag[0] & 7)) {
                case VARINT -> {
                    long[] value = varint(message, at);
                    if (value == null) {
                        return false;
                    }
                    at = (int) value[1];
                }
                case FIXED64 -> {
                    if (message.length - at < 8) {
                        return false;
                    }
                    at += 8;
                }
                case LENGTH_DELIMITED -> {
                    long[] length = varint(message, at);
                    if (length == null || length[0] < 0 || length[0] > message.length - length[1]) {
                        return false;
                    }
                    at = (int) (length[1] + length[0]);
                }
                case START_GROUP -> {
                    if (depth == MAX_GROUP_DEPTH) {
                        return false;
                    }
                    openGroups[depth++] = field;
                }
                case END_GROUP -> {
                    if (depth == 0 || openGroups[depth - 1] != field) {
                        return false;
                    }
                    depth--;
                }
                case FIXED32 -> {
                    if (message.length - at < 4) {
                        return false;
                    }
                    at += 4;
                }
                default -> {
                    return false; // wire types 6 and 7 do not exist
                }
            }
        }
        return depth == 0;
    }

    /** {value, position after it}, or null when no whole varint of at most 64 bits starts at {@code at}. */
    static long[] varint(byte[] bytes, int at) {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at >= bytes.length) {
                return null;
            }
            int b = bytes[at++] & 0xff;
            value |= (long) (b & 0x7f) << shift;
            if (b < 0x80) {
                return new long[] {value, at};
            }
        }
        return null;
    }
}
