package dev.mcpd.spool;

import java.util.Objects;

/**
 * A sender's credential header, kept so it can be passed on to the upstream.
 * Stored only in the spool's mode-0600 credential files; never printed.
 *
 * @param header the header it came in ({@code Authorization} or {@code x-mcpd-key})
 * @param value  the header's value
 */
public record Credential(String header, String value) {

    public Credential {
        Objects.requireNonNull(header, "header");
        Objects.requireNonNull(value, "value");
    }

    @Override
    public String toString() {
        return "Credential[" + header + ": ***]";
    }
}
