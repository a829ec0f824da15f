package dev.mcpd.collector;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The throwaway PostgreSQL server of the tests: where to connect ({@link #url()}), and {@link #stop()} /
 * {@link #start()} to take it away and bring it back (for readiness tests), by the cluster's own {@code pg_ctl}.
 *
 * <p>By default a real PostgreSQL 16 that Maven brings ({@link EmbeddedTestPostgres}: zonky's binaries, started once
 * per test JVM, nothing installed). With {@code MCPD_TEST_POSTGRES_URL} set the tests use that server instead, as
 * its environment variables describe it ({@code .ci/postgres.sh} starts one of Debian's packages that way; the
 * benchmarks do).
 *
 * <p>The server is shared by every test in the run: a test that stops it must start it again in a {@code finally},
 * and such tests must not run in parallel with others that use it.
 */
public final class TestPostgres {

    static final String URL = "MCPD_TEST_POSTGRES_URL";
    static final String PG_CTL = "MCPD_TEST_PG_CTL";
    static final String PGDATA = "MCPD_TEST_PGDATA";
    static final String PG_LOG = "MCPD_TEST_PG_LOG";
    static final String PG_RUNAS = "MCPD_TEST_PG_RUNAS";

    private static final long PG_CTL_TIMEOUT_SECONDS = 120;

    private final String url;
    private final URI parsed;
    private final String pgCtl;
    private final String pgData;
    private final String pgLog;
    /** What runs pg_ctl as the server's user: {@code runuser -u <user> --}, {@code unshare -U}, or nothing. */
    private final List<String> asServer;

    TestPostgres(String url, String pgCtl, String pgData, String pgLog, List<String> asServer) {
        this.url = url;
        this.parsed = URI.create(url);
        if (!"postgres".equals(parsed.getScheme()) && !"postgresql".equals(parsed.getScheme())
                || parsed.getHost() == null || parsed.getPort() < 0) {
            throw new IllegalStateException(URL + " is not postgres://user:password@host:port/database: " + url);
        }
        this.pgCtl = blankToNull(pgCtl);
        this.pgData = blankToNull(pgData);
        this.pgLog = blankToNull(pgLog);
        this.asServer = List.copyOf(asServer);
    }

    /** The server the environment describes, or empty when {@code MCPD_TEST_POSTGRES_URL} is not set. */
    public static Optional<TestPostgres> fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    static Optional<TestPostgres> fromEnvironment(Map<String, String> env) {
        String url = blankToNull(env.get(URL));
        if (url == null) {
            return Optional.empty();
        }
        String runAs = blankToNull(env.get(PG_RUNAS));
        List<String> asServer = runAs == null || runAs.equals(System.getProperty("user.name")) ? List.of()
                : List.of("runuser", "-u", runAs, "--");
        return Optional.of(new TestPostgres(url, env.get(PG_CTL), env.get(PGDATA), env.get(PG_LOG), asServer));
    }

    /**
     * The server, for a test that needs one: the one {@code MCPD_TEST_POSTGRES_URL} names, else the embedded one.
     * Where the embedded one cannot start: in CI ({@code CI=true}) the test fails, since tests that need PostgreSQL
     * must run there; elsewhere it is aborted (reported as skipped, with the reason).
     */
    public static TestPostgres require() {
        Optional<TestPostgres> postgres = fromEnvironment();
        if (postgres.isPresent()) {
            return postgres.get();
        }
        try {
            return EmbeddedTestPostgres.server();
        } catch (IllegalStateException cannot) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                return Assertions.fail(cannot.getMessage(), cannot);
            }
            Assumptions.abort(cannot.getMessage() + " (or set " + URL + " to a server of your own)");
            throw new AssertionError("unreachable");
        }
    }

    /** {@code postgres://mcpd:mcpd@127.0.0.1:<port>/mcpd}. */
    public String url() {
        return url;
    }

    public String host() {
        return parsed.getHost();
    }

    public int port() {
        return parsed.getPort();
    }

    public String database() {
        String path = parsed.getPath();
        return path == null || path.length() <= 1 ? "" : path.substring(1);
    }

    public String user() {
        return userInfoPart(0);
    }

    public String password() {
        return userInfoPart(1);
    }

    /** The same server as a JDBC URL, without the credentials ({@link #user()}, {@link #password()}). */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host() + ":" + port() + "/" + database();
    }

    /** A JDBC connection to the server, in {@code schema} when it is not null. */
    public Connection connect(String schema) throws SQLException {
        return DriverManager.getConnection(jdbcUrl() + (schema == null ? "" : "?currentSchema=" + schema), user(),
                password());
    }

    /** Runs one SQL statement, in {@code schema} when it is not null. */
    public void execute(String schema, String sql) throws SQLException {
        try (Connection connection = connect(schema); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** A new empty schema, {@code prefix} and a random suffix, for one test's tables: its name. */
    public String createSchema(String prefix) throws SQLException {
        String schema = prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        execute(null, "CREATE SCHEMA " + schema);
        return schema;
    }

    /** {@link #url()} with {@code schema} as the current schema: the store a collector given it as --data opens. */
    public String url(String schema) {
        return url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    }

    /** Whether the server is running, as {@code pg_ctl status} tells. */
    public boolean isRunning() {
        Result status = pgCtl(List.of("status"));
        if (status.exitCode == 0) {
            return true;
        }
        if (status.exitCode == 3) {
            return false;
        }
        throw new IllegalStateException("pg_ctl status failed (exit " + status.exitCode + "): " + status.output);
    }

    /** Stops the server ({@code pg_ctl stop -m fast}, waiting until it is down); does nothing if it is down. */
    public void stop() {
        if (isRunning()) {
            check(pgCtl(List.of("-w", "-t", "60", "stop", "-m", "fast")), "stop");
        }
    }

    /**
     * Starts the server again ({@code pg_ctl start}, waiting until it accepts connections); does nothing if it is
     * running, so it can sit in a {@code finally}.
     */
    public void start() {
        if (!isRunning()) {
            if (pgLog == null) {
                throw new IllegalStateException(PG_LOG + " is not set: the server cannot be started");
            }
            check(pgCtl(List.of("-l", pgLog, "-w", "-t", "60", "start")), "start");
        }
    }

    @Override
    public String toString() {
        return "TestPostgres[" + url + ", data " + pgData + "]";
    }

    private String userInfoPart(int index) {
        String userInfo = parsed.getRawUserInfo();
        if (userInfo == null) {
            return "";
        }
        String[] parts = userInfo.split(":", 2);
        return index < parts.length ? URLDecoder.decode(parts[index], StandardCharsets.UTF_8) : "";
    }

    private record Result(List<String> command, int exitCode, String output) {
    }

    private static void check(Result result, String what) {
        if (result.exitCode != 0) {
            throw new IllegalStateException("pg_ctl " + what + " failed (exit " + result.exitCode + "): "
                    + String.join(" ", result.command) + "\n" + result.output);
        }
    }

    /**
     * Runs pg_ctl on the cluster as the server's user (through {@code runuser} or {@code unshare}, as the server
     * was started), from the cluster's directory, and waits for it. Its output goes to a file, not a pipe: the server pg_ctl starts must
     * not hold our end open.
     */
    private Result pgCtl(List<String> arguments) {
        if (pgCtl == null || pgData == null) {
            throw new IllegalStateException(PG_CTL + " and " + PGDATA + " must be set to stop or start " + url
                    + " (source .ci/postgres.sh)");
        }
        List<String> command = new ArrayList<>(asServer);
        command.addAll(List.of(pgCtl, "-D", pgData));
        command.addAll(arguments);
        Path output = null;
        try {
            output = Files.createTempFile("mcpd-pg-ctl", ".log");
            File parent = new File(pgData).getAbsoluteFile().getParentFile();
            Process process = new ProcessBuilder(command)
                    .directory(parent != null && parent.isDirectory() ? parent : null)
                    .redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(PG_CTL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("pg_ctl did not finish in " + PG_CTL_TIMEOUT_SECONDS + " s: "
                        + String.join(" ", command) + "\n" + Files.readString(output));
            }
            return new Result(command, process.exitValue(), Files.readString(output));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        } finally {
            if (output != null) {
                try {
                    Files.deleteIfExists(output);
                } catch (IOException ignored) {
                    // a leftover temp file is harmless
                }
            }
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}
