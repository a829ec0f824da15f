package dev.mcpd.wire;

/**
 * The header in which an mcpd collector's probe answer names what it takes beyond plain HTTP/1.1, space-separated:
 * {@code h2c} (HTTP/2 with prior knowledge) and {@link RelayBatch#CAPABILITY}. A relay's probe reads it to choose how
 * it delivers.
 */
public final class Capabilities {

    public static final String HEADER = "Mcpd-Capabilities";

    private Capabilities() {
    }
}
