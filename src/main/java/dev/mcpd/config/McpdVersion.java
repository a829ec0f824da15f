package dev.mcpd.config;

/** The version of this mcpd: what {@code --version} prints and what its health checks say they are. */
public final class McpdVersion {

    public static final String VERSION = "0.1.0";

    private McpdVersion() {
    }
}
