package dev.mcpd.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * What the checks of every option share: an error that names the option (and its variable) given the bad value, and
 * the common forms — whole numbers, sizes of at least a byte, directories, URLs fit to print.
 */
final class OptionValues {

    private static final Pattern WHOLE_NUMBER = Pattern.compile("\\d+");

    private OptionValues() {
    }

    /** Runs a check of a value given in code: the error names the option and its variable. */
    static <T> T check(Option<?> option, Supplier<T> value) {
        return check(option.flag() + " (" + option.environmentVariable() + ")", value);
    }

    /** Runs a check; a failure becomes a ConfigException naming {@code what} was given the bad value. */
    static <T> T check(String what, Supplier<T> value) {
        try {
            return value.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException("invalid value for " + what + ": " + e.getMessage());
        }
    }

    static long wholeNumber(String text) {
        String digits = text.strip();
        if (!WHOLE_NUMBER.matcher(digits).matches()) {
            throw new IllegalArgumentException("\"" + text + "\" is not a whole number");
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException tooManyDigits) {
            throw new IllegalArgumentException("\"" + text + "\" is too large");
        }
    }

    static long atLeastOneByte(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException(bytes + " bytes is too small: use at least 1 byte");
        }
        return bytes;
    }

    static Path existingDirectory(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("\"" + dir + "\" is not a directory");
        }
        return dir;
    }

    static Path parseDirectory(String text) {
        if (text.isBlank()) {
            throw new IllegalArgumentException("the value is empty: name a directory");
        }
        return parsePath(text);
    }

    static Path parsePath(String text) {
        try {
            return Path.of(text);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("\"" + text + "\" is not a path: " + e.getReason());
        }
    }

    /**
     * A URL fit to print: the password of {@code user:password@} becomes {@code ***}, a userinfo without a
     * password (often a token) becomes {@code ***} entirely, and so does any query parameter whose name
     * says it holds a password, key, token or secret (libpq accepts {@code ?password=}).
     */
    static String redact(String url) {
        return url
                .replaceFirst("^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@:]*):[^/?#@]*@", "$1$2:***@")
                .replaceFirst("^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@:]+@", "$1***@")
                .replaceAll("(?i)([?&][^=&#]*(?:pass|key|token|secret)[^=&#]*=)[^&#]*", "$1***");
    }

    static URI parseUri(String text, String notWhat) {
        try {
            return new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("\"" + redact(text) + "\" " + notWhat);
        }
    }
}
