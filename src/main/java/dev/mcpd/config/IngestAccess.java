package dev.mcpd.config;

import java.util.Objects;
import java.util.Optional;

/**
 * Who may send, and how much: {@code mcpd config}'s {@code ingest} line.
 *
 * @param key            the key a sender must present; empty means open ({@code --ingest-key})
 * @param quotaPerMinute the collector's per-replica cap on ingest requests per minute; 0 for none
 *                       ({@code --quota-per-minute})
 */
public record IngestAccess(Optional<Secret> key, long quotaPerMinute) {

    public IngestAccess {
        Objects.requireNonNull(key, "key");
        long quota = quotaPerMinute;
        OptionValues.check(Options.QUOTA_PER_MINUTE, () -> checkQuota(quota));
    }

    static long checkQuota(long quota) {
        if (quota < 0) {
            throw new IllegalArgumentException(quota + " is not a quota: use a whole number of requests per minute,"
                    + " or 0 for none");
        }
        return quota;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        return (key.isPresent() ? "sender key required (--ingest-key)" : "open: no sender key required")
                + (quotaPerMinute > 0 ? "; collector quota " + quotaPerMinute + " requests/min per replica" : "");
    }
}
