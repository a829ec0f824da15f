package dev.mcpd.store;

import dev.mcpd.logs.RootCause;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SQLite: whether the database file at the store's path is still the one the store opened. A connection keeps writing
 * into a file that was deleted (or whose folder was) and answers "committed", so a commit counts only if the file is
 * still the one opened; once it is not, the store says why (503, readiness) until a file is there again, which it then
 * migrates and archives into. Called under the store's writer lock.
 */
final class SqliteFileWatch {

    /** Makes a fresh database at the path ready: the store's migrations. */
    interface Migration {
        void run() throws SQLException;
    }

    private static final Logger LOG = LoggerFactory.getLogger(JdbcStore.class); // the lines operators know

    private final Path file;
    private final Runnable letConnectionsGo;
    /** The database file the store opened (its file key), which every commit must still have gone to. */
    private volatile Object opened;
    /** Why the store's file is no longer the one it opened; null while it is. */
    private volatile String lost;

    /** @param letConnectionsGo closes the pool's connections to a lost file (busy ones when they are returned) */
    SqliteFileWatch(Path file, Runnable letConnectionsGo) {
        this.file = file;
        this.letConnectionsGo = letConnectionsGo;
    }

    /** The store opened the file now at the path. */
    void opened() throws IOException {
        opened = currentFile();
    }

    /** Why the file is lost, or null while it is the one opened. */
    String lost() {
        return lost;
    }

    /** Whether the file is no longer the one opened (recorded, and the pool's connections let go, once). */
    boolean changed() {
        if (lost != null) {
            return true;
        }
        Object now;
        try {
            now = currentFile();
        } catch (IOException e) {
            now = null;
        }
        if (now != null && now.equals(opened)) {
            return false;
        }
        lost = "the store file " + file + (now == null ? " is gone (deleted, or its folder removed)"
                : " was replaced");
        LOG.error("{}: ingest is answered 503 until the file is back; nothing is archived into the lost file", lost);
        letConnectionsGo.run();
        return true;
    }

    /** After the file was lost: a new database at the store's path, migrated, once its folder is there again. */
    void reopenIfLost(Migration migrate) {
        if (lost == null) {
            return;
        }
        try {
            migrate.run();
            opened = currentFile();
        } catch (SQLException | IOException | RuntimeException e) {
            throw new StoreUnavailable(lost + " (" + RootCause.oneLine(e) + ")", e);
        }
        LOG.warn("{}: archiving into a new database at that path from now on", lost);
        lost = null;
    }

    private Object currentFile() throws IOException {
        return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    }
}
