package dev.mcpd.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes as operators write them: a whole number of bytes, or one followed by
 * {@code B}, {@code KiB}, {@code MiB} or {@code GiB} (binary units, spelled exactly so: {@code MB} is
 * refused rather than guessed at, because 10 MB and 10 MiB differ by 5%).
 */
public final class ByteSize {
    public static final long KIB = 1024L;
    public static final long MIB = 1024L * KIB;
    public static final long GIB = 1024L * MIB;

    private static final Pattern SIZE = Pattern.compile("(\\d+) *(B|KiB|MiB|GiB)?");

    private ByteSize() {
    }

    /**
     * Parses a size such as {@code 1048576}, {@code 512KiB} or {@code 16 MiB}.
     *
     * @throws IllegalArgumentException with a one-line message when the text is not a byte size
     */
    public static long parse(String text) {
        Matcher m = SIZE.matcher(text == null ? "" : text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("\"" + text + "\" is not a byte size: "
                    + "use a whole number of bytes, KiB, MiB or GiB (e.g. 16MiB)");
        }
        try {
            return Math.multiplyExact(Long.parseLong(m.group(1)), unit(m.group(2)));
        } catch (ArithmeticException | NumberFormatException tooManyDigits) {
            throw new IllegalArgumentException("\"" + text + "\" is too large a byte size");
        }
    }

    /** The size in the largest unit that shows it exactly: "1024 MiB", "512 KiB", "1000 bytes". */
    public static String format(long bytes) {
        if (bytes != 0 && bytes % MIB == 0) {
            return bytes / MIB + " MiB";
        }
        if (bytes != 0 && bytes % KIB == 0) {
            return bytes / KIB + " KiB";
        }
        return bytes == 1 ? "1 byte" : bytes + " bytes";
    }

    private static long unit(String suffix) {
        if (suffix == null) {
            return 1;
        }
        return switch (suffix) {
            case "KiB" -> KIB;
            case "MiB" -> MIB;
            case "GiB" -> GIB;
            default -> 1;
        };
    }
}
