package dev.mcpd.store;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Where {@code --data} puts the archive: an embedded SQLite file, or a PostgreSQL database named by
 * {@code postgres://user:password@host:port/database} (also {@code postgresql://}; query parameters are passed to
 * the JDBC driver, e.g. {@code ?sslmode=require}).
 */
public record StoreLocation(Dialect dialect, String jdbcUrl, Optional<String> user, Optional<String> password,
                            Optional<Path> file) {

    public enum Dialect {
        SQLITE, POSTGRES
    }

    public static StoreLocation of(String data) {
        String lower = data.toLowerCase(Locale.ROOT);
        if (!lower.startsWith("postgres://") && !lower.startsWith("postgresql://")) {
            Path file = Path.of(data).toAbsolutePath();
            // WAL: readers never block the writer; FULL: a commit is fsynced before the answer; IMMEDIATE: a
            // writer takes the lock when its transaction begins, so two writers never deadlock upgrading it.
            return new StoreLocation(Dialect.SQLITE, "jdbc:sqlite:" + file
                    + "?journal_mode=WAL&synchronous=FULL&busy_timeout=10000&transaction_mode=IMMEDIATE",
                    Optional.empty(), Optional.empty(), Optional.of(file));
        }
        URI uri = URI.create(data);
        Optional<String> user = Optional.empty();
        Optional<String> password = Optional.empty();
        if (uri.getRawUserInfo() != null) {
            String[] parts = uri.getRawUserInfo().split(":", 2);
            user = Optional.of(decode(parts[0]));
            if (parts.length == 2) {
                password = Optional.of(decode(parts[1]));
            }
        }
        String jdbc = "jdbc:postgresql://" + uri.getHost() + (uri.getPort() > 0 ? ":" + uri.getPort() : "")
                + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        return new StoreLocation(Dialect.POSTGRES, jdbc, user, password, Optional.empty());
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }

    /** For logs: never the password. */
    public String describe() {
        return file.map(f -> f + " (embedded SQLite)")
                .orElse(jdbcUrl.replaceFirst("^jdbc:", "") + user.map(u -> " as " + u).orElse("") + " (PostgreSQL)");
    }

    @Override
    public String toString() {
        return describe();
    }
}
