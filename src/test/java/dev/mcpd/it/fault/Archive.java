package dev.mcpd.it.fault;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.collector.TestPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the collectors of a scenario archive, read straight from the database (not through the collector): either
 * one SQLite file per collector, or one PostgreSQL schema shared by every collector (created empty for the scenario
 * and dropped after it, as {@code MultiRegionIT} does). "Duplicates stored" is rows minus distinct bodies across the
 * whole archive; "archived" requests are the {@code seq}s of this run's events found in it.
 */
abstract class Archive implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the archive holds. */
    record Contents(long rows, long distinctBodies, Set<Integer> seqs, List<String> strangers) {
        long duplicatesStored() {
            return rows - distinctBodies;
        }
    }

    /** The {@code --data} value for collector {@code index} (0-based). */
    abstract String data(int index);

    /** Whether every collector shares one store (then each {@code /v1/stats} reports all of it). */
    abstract boolean shared();

    abstract String describe();

    /** Rows, distinct bodies and this run's seqs, over every store of the archive. */
    Contents contents(String run) throws SQLException, IOException {
        long rows = 0;
        Set<String> bodies = new HashSet<>();
        Set<Integer> seqs = new TreeSet<>();
        List<String> strangers = new ArrayList<>();
        for (int store = 0; store < stores(); store++) {
            try (Connection connection = connect(store); Statement statement = connection.createStatement()) {
                try (ResultSet rs = statement.executeQuery("SELECT count(*), count(DISTINCT body) FROM batches")) {
                    rs.next();
                    rows += rs.getLong(1);
                }
                try (ResultSet rs = statement.executeQuery("SELECT body FROM batches")) {
                    while (rs.next()) {
                        String body = new String(rs.getBytes(1), StandardCharsets.UTF_8);
                        bodies.add(body);
                        JsonNode event = JSON.readTree(body).path("events").path(0);
                        if (run.equals(event.path("run").asText())) {
                            seqs.add(event.path("seq").asInt(-1));
                        } else {
                            strangers.add(body.length() > 120 ? body.substring(0, 120) + "…" : body);
                        }
                    }
                }
            }
        }
        return new Contents(rows, bodies.size(), seqs, strangers);
    }

    abstract int stores();

    abstract Connection connect(int store) throws SQLException;

    @Override
    public void close() throws SQLException {
    }

    // ------------------------------------------------------------------------------------------------- SQLite

    /** The archive two collectors share: a fresh schema of the test PostgreSQL. */
    static Archive sharedByTwo() throws SQLException {
        return postgres(TestPostgres.require());
    }

    /** One SQLite file per collector: {@code dir/collector-<n>.db}. */
    static Archive sqlite(Path dir, int collectors) {
        return new Archive() {
            @Override
            String data(int index) {
                return file(index).toString();
            }

            private Path file(int index) {
                return dir.resolve("collector-" + (index + 1) + ".db");
            }

            @Override
            boolean shared() {
                return false;
            }

            @Override
            String describe() {
                return collectors == 1 ? "SQLite" : collectors + " SQLite files";
            }

            @Override
            int stores() {
                return collectors;
            }

            @Override
            Connection connect(int store) throws SQLException {
                return DriverManager.getConnection("jdbc:sqlite:" + file(store));
            }
        };
    }

    // ------------------------------------------------------------------------------------------------- PostgreSQL

    /** A fresh schema on the test PostgreSQL server, shared by every collector; dropped by {@link #close()}. */
    static Archive postgres(TestPostgres postgres) throws SQLException {
        String schema = postgres.createSchema("mcpd_fault_");
        return new Archive() {
            @Override
            String data(int index) {
                return postgres.url(schema);
            }

            @Override
            boolean shared() {
                return true;
            }

            @Override
            String describe() {
                return "PostgreSQL";
            }

            @Override
            int stores() {
                return 1;
            }

            @Override
            Connection connect(int store) throws SQLException {
                return postgres.connect(schema);
            }

            @Override
            public void close() throws SQLException {
                postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        };
    }
}
