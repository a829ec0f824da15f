package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The test PostgreSQL server really goes away on {@link TestPostgres#stop()} and comes back on start(). */
class TestPostgresTest {

    @Test
    void stopTakesTheServerAwayAndStartBringsItBack() throws Exception {
        TestPostgres postgres = TestPostgres.require();
        assertTrue(accepts(postgres), "the server should be up before the test: " + postgres);

        postgres.stop();
        try {
            assertFalse(postgres.isRunning());
            assertFalse(accepts(postgres), "a TCP connect should fail while the server is stopped");
        } finally {
            postgres.start();
        }

        assertTrue(postgres.isRunning());
        assertTrue(accepts(postgres), "a TCP connect should work once the server is started again");
        try (Connection connection = postgres.connect(null); Statement statement = connection.createStatement();
                ResultSet one = statement.executeQuery("select 1")) {
            assertTrue(one.next());
            assertEquals(1, one.getInt(1), "a query answers once the server is started again");
        }
    }

    private static boolean accepts(TestPostgres postgres) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(postgres.host(), postgres.port()), 2_000);
            return true;
        } catch (IOException refused) {
            return false;
        }
    }
}
