package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SmallTmpfs;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durable accept and the spool's bound on a real full disk (ENOSPC from a 512 KiB tmpfs holding the spool): a request the spool cannot
 * store is answered 503 with {@code Retry-After: 5} so the sender keeps it, nothing of it is written, the relay keeps
 * running, and it accepts again as soon as there is room.
 */
class DiskFullTest {

    /** Larger than a page: a request never fits in the slack at the end of the segment's last page. */
    static final int BODY_BYTES = 9000;

    @TempDir
    Path tmp;

    private SmallTmpfs disk;
    private RunningRelay relay;
    private final List<byte[]> acknowledged = new ArrayList<>();
    private int counter;

    @BeforeEach
    void startRelayWithItsSpoolOnASmallDisk() {
        disk = SmallTmpfs.mount(tmp.resolve("small"), "512k");
        // The only upstream is down: nothing leaves the spool while the test runs.
        relay = RunningRelay.start(tmp, Map.of("MCPD_SPOOL_DIR", disk.path().toString()));
    }

    @AfterEach
    void stopRelayAndUnmount() {
        try {
            if (relay != null) {
                relay.close();
            }
        } finally {
            if (disk != null) {
                disk.close();
            }
        }
    }

    private byte[] nextBody() {
        byte[] body = new byte[BODY_BYTES];
        new Random(counter++).nextBytes(body);
        return body;
    }

    private HttpResponse<String> post(byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).header("Content-Type",
                "application/octet-stream").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private void postAccepted() throws Exception {
        byte[] body = nextBody();
        HttpResponse<String> answer = post(body);
        assertEquals(202, answer.statusCode(), answer.body());
        acknowledged.add(body);
    }

    private void assertSpoolHoldsExactlyTheAcknowledgedRequests() throws Exception {
        SpoolReader.Contents onDisk = SpoolReader.read(relay.spoolDir());
        assertEquals(List.of(), onDisk.damage(), "no torn or partial entry");
        List<SpoolEntry> entries = onDisk.entries();
        assertEquals(acknowledged.size(), entries.size());
        for (int i = 0; i < entries.size(); i++) {
            assertArrayEquals(acknowledged.get(i), entries.get(i).request().body(), "entry " + i);
        }
    }

    @Test
    void postsAreRefused503WithRetryAfterOnceTheDiskIsFullAndNothingOfThemIsKept() throws Exception {
        assertTrue(relay.spoolDir().startsWith(disk.path()), "the spool lives on the small disk");
        postAccepted();
        postAccepted();
        disk.fill();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> answer = post(nextBody());
            assertEquals(503, answer.statusCode(), answer.body());
            assertEquals("5", answer.headers().firstValue("Retry-After").orElse(null));
            assertEquals("the spool could not store the request; retry later\n", answer.body(),
                    "the spool's own reason, not an internal error's");
            assertFalse(answer.headers().firstValue("mcpd-relay").isPresent(), "not spooled");
        }
        assertEquals(2, relay.application().spool().entries());
        assertSpoolHoldsExactlyTheAcknowledgedRequests();
    }

    @Test
    void theRelayKeepsRunningOnAFullDiskAndAcceptsAgainOnceSpaceReturns() throws Exception {
        postAccepted();
        disk.fill();
        for (int i = 0; i < 5; i++) {
            assertEquals(503, post(nextBody()).statusCode());
        }
        HttpResponse<String> health = HTTP.send(HttpRequest.newBuilder(relay.uri("/healthz")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, health.statusCode(), "the relay is alive while its disk is full");

        disk.free();
        postAccepted();
        postAccepted();
        HttpResponse<String> otlp = HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/traces"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"resourceSpans\":[]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, otlp.statusCode(), otlp.body());
        acknowledged.add("{\"resourceSpans\":[]}".getBytes(StandardCharsets.UTF_8));
        assertEquals(4, relay.application().spool().entries());
        assertSpoolHoldsExactlyTheAcknowledgedRequests();
    }
}
