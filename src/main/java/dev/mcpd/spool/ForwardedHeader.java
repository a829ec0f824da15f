package dev.mcpd.spool;

import java.util.Objects;

/**
 * A sender's header the relay keeps with an entry and sends with it upstream ({@code --forward-header}): its name as
 * the operator wrote it, and the sender's value, checked at ingest (no control character, 1 KiB at most).
 */
public record ForwardedHeader(String name, String value) {

    public ForwardedHeader {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
    }
}
