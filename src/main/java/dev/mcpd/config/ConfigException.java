package dev.mcpd.config;

/**
 * A configuration value mcpd cannot start with. The message is one line that names the option (and,
 * when it came from there, the environment variable), because it is printed as is, after {@code mcpd: },
 * instead of a stack trace.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        // A value echoed in the message may carry a line break (an environment variable can); keep one line.
        super(message.replaceAll("\\R", " "));
    }
}
