package dev.mcpd.tls;

import java.time.Instant;
import java.util.Optional;

/** One use of TLS files that takes new ones without a restart: the listener, the upstream clients. */
public interface TlsUse {

    /** {@code listener} or {@code upstream}: the {@code use} label of {@code mcpd_tls_certificate_expiry_seconds}. */
    String name();

    /** When the certificate this use presents stops being valid; empty when it presents none. */
    Optional<Instant> notAfter();

    /**
     * Reads its files again and, when they changed and are valid, uses them for new connections (open ones keep
     * theirs). Returns a one-line description of what changed, or empty when nothing did.
     *
     * @throws dev.mcpd.config.ConfigException when the files changed into something unusable: the old ones stay
     */
    Optional<String> reloadIfChanged();
}
