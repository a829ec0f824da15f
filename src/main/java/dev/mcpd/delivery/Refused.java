package dev.mcpd.delivery;

import dev.mcpd.spool.SpoolEntry;

/** An entry an upstream refused for good, and why: what the dead-letter step keeps in dead/. */
record Refused(SpoolEntry entry, PermanentRefusal refusal) {
}
