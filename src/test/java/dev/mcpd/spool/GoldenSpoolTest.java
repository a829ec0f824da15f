package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool written by format version 1, kept as files ({@code src/test/resources/golden/spool-v1/relay/}: a segment
 * of three entries, its {@code .cred} with two credentials, its {@code .ack} saying entry 2 was delivered) and read
 * by today's code. Should this test fail after a change of the record format, every spool on disk would be orphaned
 * by an upgrade: read the old version too, rather than writing the files again.
 */
class GoldenSpoolTest {

    private static final List<String> FILES = List.of("00000000000000000001.seg", "00000000000000000001.cred",
            "00000000000000000001.ack");

    @TempDir
    Path dir;

    private Path copyOfTheGoldenSpool() throws IOException {
        Path relay = dir.resolve("relay");
        Files.createDirectories(relay);
        for (String file : FILES) {
            try (InputStream in = GoldenSpoolTest.class.getResourceAsStream("/golden/spool-v1/relay/" + file)) {
                Files.copy(in, relay.resolve(file));
            }
        }
        return relay;
    }

    @Test
    void aVersionOneSpoolIsReadWithEveryFieldAndEveryByte() throws Exception {
        Path relay = copyOfTheGoldenSpool();
        try (Spool spool = Spool.open(relay)) {
            assertEquals(2, spool.entries(), "entry 2 was acknowledged");
            SpoolEntry first = spool.next(Duration.ofSeconds(1)).orElseThrow();
            assertEquals(1, first.seq());
            assertEquals("POST", first.request().method());
            assertEquals("/v1/traces?tenant=a", first.request().target());
            assertEquals("application/x-protobuf", first.request().contentType());
            assertEquals("gzip", first.request().contentEncoding());
            assertEquals("relay-golden-1", first.request().idempotencyKey());
            assertArrayEquals(new byte[] {0x1f, (byte) 0x8b, 8, 0, 1, 2, 3}, first.request().body());
            assertEquals(Optional.of(new Credential("Authorization", "Bearer golden-token")),
                    first.request().credential());
            assertEquals(1_764_547_200_000L, first.request().receivedAtMillis());
            SpoolEntry third = spool.next(Duration.ofSeconds(1)).orElseThrow();
            assertEquals(3, third.seq());
            assertEquals("application/json; charset=utf-8", third.request().contentType());
            assertEquals("sender-key-3", third.request().idempotencyKey());
            assertEquals(Optional.of(new Credential("x-mcpd-key", "golden-key")), third.request().credential());
            assertArrayEquals("{\"events\":[{\"waiting\":\"é\"}]}".getBytes(StandardCharsets.UTF_8),
                    third.request().body());
            assertFalse(spool.next(Duration.ofMillis(50)).isPresent());
            long next = spool.append(new SpoolRequest("POST", "/x", "", "", "k", Optional.empty(), 0, new byte[0]))
                    .get(10, TimeUnit.SECONDS).seq();
            assertEquals(4, next, "sequence numbers go on above the old spool's");
        }
    }

    @Test
    void spoolCheckFindsTheVersionOneSpoolWhole() throws Exception {
        SpoolReader.Check check = SpoolReader.check(copyOfTheGoldenSpool());
        assertEquals(2, check.entries());
        assertFalse(check.damaged(), check.damagedRegions().toString());
        assertEquals(List.of(), check.tornTails());
    }
}
