package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
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
        assertEquals("1", psql(postgres.url(), "select 1"));
    }

    private static boolean accepts(TestPostgres postgres) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(postgres.host(), postgres.port()), 2_000);
            return true;
        } catch (IOException refused) {
            return false;
        }
    }

    /** Runs one statement with psql and returns its unaligned, tuples-only output; fails on a non-zero exit. */
    private static String psql(String url, String sql) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql)
                .redirectErrorStream(true);
        builder.environment().put("PGCONNECT_TIMEOUT", "10");
        Process process = builder.start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "psql did not finish");
        assertEquals(0, process.exitValue(), "psql " + url + " -c '" + sql + "' failed: " + output);
        return output;
    }
}
