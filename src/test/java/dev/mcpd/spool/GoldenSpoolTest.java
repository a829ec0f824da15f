package dev.mcpd.spool;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.Golden;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool written by format version 1, kept as files ({@code src/test/resources/golden/spool-v1/relay/}: a segment
 * of three entries, its {@code .cred} with two credentials, its {@code .ack} saying entry 2 was delivered) and read
 * by today's code. Should this test fail after a change of the record format, every spool on disk would be orphaned
 * by an upgrade: read the old version too, rather than writing the files again.
 *
 * <p>Beside it, {@code golden/spool-v1-torn-tail/relay/}: one segment of three entries whose last append a crash cut
 * in the middle of its record. It was written by this class ({@link #writeTheTornSegment()}, which runs only with
 * {@code -Dmcpd.golden.write=true -Dtest=GoldenSpoolTest#writeTheTornSegment}); every other run reads it as the
 * spool does at a start after that crash.
 */
class GoldenSpoolTest {

    private static final List<String> FILES = List.of("00000000000000000001.seg", "00000000000000000001.cred",
            "00000000000000000001.ack");

    @TempDir
    Path dir;

    private static final String TORN = "spool-v1-torn-tail/relay/00000000000000000001.seg";
    private static final List<String> TORN_TARGETS = List.of("/torn/0", "/torn/1", "/torn/2");

    private static SpoolRequest tornSpoolRequest(int i) {
        return new SpoolRequest("POST", TORN_TARGETS.get(i), "application/json", "", "torn-key-" + i,
                Optional.empty(), 1_764_547_200_000L + i, ("{\"events\":[{\"seq\":" + i + "}]}")
                .getBytes(StandardCharsets.UTF_8));
    }

    /**
     * With {@code -Dmcpd.golden.write=true}: three appends, each its own batch, then the segment cut half-way through
     * the last record, as a crash during that batch's write leaves it.
     */
    @Test
    void writeTheTornSegment() throws Exception {
        Assumptions.assumeTrue(Golden.writing(), "writes the golden torn segment only when asked");
        Path relay = dir.resolve("writing");
        try (Spool spool = Spool.open(relay)) {
            for (int i = 0; i < TORN_TARGETS.size(); i++) {
                spool.append(tornSpoolRequest(i)).get(10, TimeUnit.SECONDS);
            }
        }
        Path segment = SpoolFiles.segment(relay, 1);
        EntryLocation last = SegmentScan.of(segment).entries().get(TORN_TARGETS.size() - 1);
        byte[] whole = Files.readAllBytes(segment);
        Golden.assertBytes(TORN, Arrays.copyOf(whole, (int) (last.offset() + last.size() / 2)));
    }

    private Path copyOfTheTornSegment() throws IOException {
        Path relay = dir.resolve("torn").resolve("relay");
        Files.createDirectories(relay);
        Files.write(relay.resolve("00000000000000000001.seg"), Golden.bytes(TORN));
        return relay;
    }

    @Test
    void aSegmentWhoseLastBatchWasTornIsReadUpToItsLastWholeRecord() throws Exception {
        byte[] golden = Golden.bytes(TORN);
        Path relay = copyOfTheTornSegment();

        SpoolReader.Check check = SpoolReader.check(relay);
        assertEquals(2, check.entries(), "the two whole entries wait; the torn one was never acknowledged");
        assertFalse(check.damaged(), check.damagedRegions().toString());
        assertEquals(1, check.tornTails().size(), check.tornTails().toString());
        EntryLocation lastWhole = SegmentScan.of(relay.resolve("00000000000000000001.seg")).entries().get(1);
        long tornFrom = lastWhole.offset() + lastWhole.size();
        String tail = check.tornTails().get(0);
        assertTrue(tail.startsWith("00000000000000000001.seg: torn record at offset " + tornFrom), tail);
        assertTrue(tail.endsWith("; " + (golden.length - tornFrom) + " bytes from offset " + tornFrom
                + " are a torn tail (never acknowledged)"), tail);

        List<SpoolEntry> read = SpoolReader.read(relay).entries();
        assertEquals(TORN_TARGETS.subList(0, 2), read.stream().map(e -> e.request().target()).toList());

        try (Spool spool = Spool.open(relay)) {
            assertEquals(0, spool.corrupted(), "a torn tail is not damage");
            assertEquals(2, spool.entries());
            for (int i = 0; i < 2; i++) {
                SpoolEntry entry = spool.next(Duration.ofSeconds(1)).orElseThrow();
                assertEquals(i + 1, entry.seq());
                SpoolRequest expected = tornSpoolRequest(i);
                assertEquals(expected.target(), entry.request().target());
                assertEquals(expected.idempotencyKey(), entry.request().idempotencyKey());
                assertEquals(expected.receivedAtMillis(), entry.request().receivedAtMillis());
                assertArrayEquals(expected.body(), entry.request().body());
            }
            assertFalse(spool.next(Duration.ofMillis(50)).isPresent(), "the torn entry is never given out");
        }
        assertEquals(0, SpoolReader.check(relay).corruptFiles(), "nothing of the torn tail kept as damage");
    }

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
