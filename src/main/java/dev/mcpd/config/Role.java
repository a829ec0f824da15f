package dev.mcpd.config;

/** Which command an option belongs to: {@code mcpd relay}, {@code mcpd serve} (or both). */
public enum Role {
    RELAY, SERVE
}
