package dev.mcpd.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.UnixOperatingSystemMXBean;
import dev.mcpd.testing.RawHttp;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 6, item 3: thousands of idle connections are bounded — each is closed after twice the request timeout without a
 * byte either way — and while they are open the relay answers as usual.
 */
class IdleConnectionsTest {

    /** Request timeout 1 s: idle connections are closed after 2 s. */
    @RegisterExtension
    static final SharedRelay relay = new SharedRelay(Map.of("MCPD_REQUEST_TIMEOUT_SECONDS", "1"));

    /** Client and server ends share this JVM's descriptors: stay well inside its limit. */
    private static int idleConnections() {
        long limit = ((UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getMaxFileDescriptorCount();
        return (int) Math.min(3000, (limit - 1000) / 2);
    }

    private static String post(String body) {
        return "POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    @Test
    void thousandsOfIdleConnectionsAreClosedAndTheRelayAnswersMeanwhile() throws Exception {
        int count = idleConnections();
        assertTrue(count >= 1000, "the descriptor limit allows a thousand connections: " + count);
        List<RawHttp> idle = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                RawHttp connection = new RawHttp(relay.port(), 10_000);
                switch (i % 3) {
                    case 0 -> { } // connects and says nothing
                    case 1 -> connection.send("POST /v1/ingest HTTP/1.1\r\nHost: re"); // half a head, then silence
                    default -> assertTrue(connection.send("GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n")
                            .readResponse().startsWith("HTTP/1.1 200 ")); // one request, kept alive, then silence
                }
                idle.add(connection);
            }

            int before = relay.spooled().size();
            try (RawHttp sender = new RawHttp(relay.port(), 5000)) {
                assertTrue(sender.send(post("while " + count + " are idle")).readResponse().startsWith("HTTP/1.1 202 "));
                assertTrue(sender.send("GET /readyz HTTP/1.1\r\nHost: relay\r\n\r\n").readResponse()
                        .startsWith("HTTP/1.1 200 "));
            }
            assertEquals(before + 1, relay.spooled().size());

            int closed = 0;
            for (RawHttp connection : idle) {
                if (!connection.closedByServer()) {
                    break; // each read waits up to 10 s: one still open says enough
                }
                closed++;
            }
            assertEquals(count, closed, "every idle connection is closed by the relay");
        } finally {
            for (RawHttp connection : idle) {
                connection.close();
            }
        }
    }

    @Test
    void aConnectionInUseIsNotIdle() throws Exception {
        try (RawHttp sender = new RawHttp(relay.port(), 5000)) {
            // A request every 500 ms for 4 s: twice the idle timeout in all, never 2 s quiet.
            for (int i = 0; i < 8; i++) {
                String answer = sender.send(post("kept busy " + i)).readResponse();
                assertTrue(answer.startsWith("HTTP/1.1 202 "), "request " + i + " on the same connection: " + answer);
                Thread.sleep(500);
            }
        }
    }
}
