package dev.mcpd.store;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Whether this replica still holds the lease, asked inside the transaction that is about to delete: a replica that
 * was paused past its lease and resumed must find out before it deletes, not after.
 */
@FunctionalInterface
public interface LeaseFence {

    /** On PostgreSQL this locks the lease row until the transaction ends, so it cannot change hands meanwhile. */
    boolean stillHeld(Connection transaction) throws SQLException;

    /** The one process on an embedded SQLite file always holds it. */
    LeaseFence ALWAYS = transaction -> true;
}
