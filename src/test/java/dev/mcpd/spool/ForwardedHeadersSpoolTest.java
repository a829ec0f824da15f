package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An entry's forwarded headers, and whether it came as a Prometheus remote write, are kept with it: through a restart, into dead/
 * and back by a replay. An entry without them is written as before (record version 1), so a spool that holds none
 * stays readable by a relay that knows only that version.
 */
class ForwardedHeadersSpoolTest {

    @TempDir
    Path dir;

    private static final List<ForwardedHeader> TENANT = List.of(new ForwardedHeader("X-Scope-OrgID", "tenant-a"),
            new ForwardedHeader("X-Prometheus-Remote-Write-Version", "0.1.0"));

    private static SpoolRequest request(String key, List<ForwardedHeader> forwarded, boolean remoteWrite) {
        return new SpoolRequest("POST", "/api/v1/write", "application/x-protobuf", "snappy", key,
                Optional.of(new Credential("Authorization", "Bearer k")), 1_700_000_000_000L,
                ("body of " + key).getBytes(StandardCharsets.UTF_8), forwarded, remoteWrite);
    }

    private static void assertSameRequest(SpoolRequest expected, SpoolRequest actual) {
        assertEquals(expected.idempotencyKey(), actual.idempotencyKey());
        assertEquals(expected.forwarded(), actual.forwarded());
        assertEquals(expected.remoteWrite(), actual.remoteWrite());
        assertEquals(expected.target(), actual.target());
        assertEquals(expected.credential(), actual.credential());
        assertEquals(new String(expected.body(), StandardCharsets.UTF_8), new String(actual.body(),
                StandardCharsets.UTF_8));
    }

    @Test
    void forwardedHeadersAndTheRemoteWriteMarkSurviveARestartADeadLetterAndAReplay() throws Exception {
        SpoolRequest tenant = request("with-headers", TENANT, true);
        SpoolRequest plain = request("plain", List.of(), false);
        try (Spool spool = Spool.open(dir.resolve("relay"))) {
            spool.append(tenant).get(10, TimeUnit.SECONDS);
            spool.append(plain).get(10, TimeUnit.SECONDS);
        }
        try (Spool spool = Spool.open(dir.resolve("relay"))) {
            SpoolEntry first = spool.next(Duration.ZERO).orElseThrow();
            assertSameRequest(tenant, first.request());
            assertSameRequest(plain, spool.next(Duration.ZERO).orElseThrow().request());
            DeadLetters dead = new DeadLetters(dir.resolve("relay"));
            dead.keep(first, new DeadLetters.Refusal("http://upstream", 400, Instant.now(), "no", new byte[0]));
            spool.done(first.seq());
            assertSameRequest(tenant, dead.entries().get(0).request());
            ReplayInbox inbox = new ReplayInbox(dir.resolve("relay"));
            inbox.handOver(dead, first.seq());
            inbox.adoptInto(DirectAppend.to(spool), System.currentTimeMillis());
            assertSameRequest(tenant, spool.next(Duration.ZERO).orElseThrow().request());
        }
    }

    @Test
    void anEntryWithoutThemIsWrittenAsVersionOneAndEverySizeIsWhatTheEncodingTakes() {
        for (SpoolRequest request : List.of(request("plain", List.of(), false), request("ordered", List.of(), true),
                request("tenant", TENANT, false), request("both", TENANT, true))) {
            RecordCodec.EncodedEntry encoded = RecordCodec.encodeEntry(7, request, 1);
            assertEquals(RecordCodec.entrySize(request), encoded.size(), request.toString());
            ByteBuffer meta = encoded.buffers()[1];
            byte version = meta.get(meta.position());
            boolean plain = request.forwarded().isEmpty() && !request.remoteWrite();
            assertEquals(plain ? 1 : 2, version, request.toString());
        }
        SpoolRequest plain = request("plain", List.of(), false);
        assertFalse(plain.remoteWrite());
        assertTrue(plain.forwarded().isEmpty());
    }
}
