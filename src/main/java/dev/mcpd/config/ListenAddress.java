package dev.mcpd.config;

import java.util.regex.Pattern;

/**
 * Where mcpd listens: {@code HOST:PORT}, or {@code [IPv6]:PORT}. Port 0 asks the system for a free port
 * (tests use it).
 */
public record ListenAddress(String host, int port) {
    private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(%[A-Za-z0-9._-]+)?");
    private static final Pattern PORT = Pattern.compile("\\d{1,5}");

    public ListenAddress {
        if (host == null || !(HOST_NAME.matcher(host).matches() || IPV6.matcher(host).matches())) {
            throw new IllegalArgumentException("\"" + host + "\" is not a host name or IP address");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(port + " is not a port: use 0 to 65535");
        }
    }

    /**
     * Parses {@code HOST:PORT} or {@code [IPv6]:PORT}.
     *
     * @throws IllegalArgumentException with a one-line message saying what is wrong
     */
    public static ListenAddress parse(String text) {
        String s = text == null ? "" : text.strip();
        String host;
        String port;
        if (s.startsWith("[")) {
            int close = s.indexOf("]:");
            if (close < 0) {
                throw notAnAddress(text, "an IPv6 address is written [ADDRESS]:PORT, e.g. [::1]:4317");
            }
            host = s.substring(1, close);
            port = s.substring(close + 2);
            if (!IPV6.matcher(host).matches()) {
                throw notAnAddress(text, "\"" + host + "\" is not an IPv6 address");
            }
        } else {
            int colon = s.lastIndexOf(':');
            if (colon < 0) {
                throw notAnAddress(text, "the port is missing (e.g. 0.0.0.0:4317)");
            }
            host = s.substring(0, colon);
            port = s.substring(colon + 1);
            if (host.contains(":")) {
                throw notAnAddress(text, "an IPv6 address goes in brackets, e.g. [::1]:4317");
            }
            if (host.isEmpty()) {
                throw notAnAddress(text, "the host is missing (0.0.0.0 listens on every interface)");
            }
            if (!HOST_NAME.matcher(host).matches()) {
                throw notAnAddress(text, "\"" + host + "\" is not a host name or IP address");
            }
        }
        if (!PORT.matcher(port).matches() || Integer.parseInt(port) > 65535) {
            throw notAnAddress(text, "the port must be a number from 0 to 65535");
        }
        return new ListenAddress(host, Integer.parseInt(port));
    }

    /** {@code HOST:PORT}, with an IPv6 host in brackets, so that {@link #parse} reads it back. */
    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    private static IllegalArgumentException notAnAddress(String text, String why) {
        return new IllegalArgumentException("\"" + text + "\" is not HOST:PORT: " + why);
    }
}
