package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.spool.Credential;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.DirectAppend;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.ReliabilityReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code mcpd relay dead list/show/replay/purge} on a stopped relay's spool. */
class DeadCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;
    private Path relaySpool;
    private Map<String, String> env;

    @BeforeEach
    void threeDeadLetters() throws Exception {
        relaySpool = tmp.resolve("spool/relay");
        env = Map.of("MCPD_SPOOL_DIR", tmp.resolve("spool").toString());
        try (Spool spool = Spool.open(relaySpool)) {
            spool.append(request("/v1/ingest", "key-a", Optional.of(new Credential("Authorization", "Bearer s3cret")),
                    "{\"a\":1}")).get(10, TimeUnit.SECONDS);
            spool.append(request("/v1/traces", "key-b", Optional.empty(), "\u0000\u00ffbinary")).get(10,
                    TimeUnit.SECONDS);
            spool.append(request("/v1/ingest?x=\u001b[31m", "key-c", Optional.empty(), "{}")).get(10, TimeUnit.SECONDS);
            DeadLetters dead = new DeadLetters(relaySpool);
            int status = 400;
            for (int i = 0; i < 3; i++) {
                SpoolEntry entry = spool.next(Duration.ofSeconds(1)).orElseThrow();
                dead.keep(entry, new DeadLetters.Refusal("http://eu:4318", status++, Instant.parse(
                        "2026-12-01T10:00:0" + i + "Z"), "refused with " + (status - 1),
                        ("{\"error\":\"no " + i + "\"}\nsecond line").getBytes(StandardCharsets.UTF_8)));
                spool.done(entry.seq());
            }
        }
    }

    private static SpoolRequest request(String target, String key, Optional<Credential> credential, String body) {
        return new SpoolRequest("POST", target, "application/json", "", key, credential, 1_700_000_000_000L,
                body.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Test
    void listShowsOneAlignedLinePerDeadLetterOldestFirst() {
        McpdRun list = run(env, "relay", "dead", "list");
        assertEquals(0, list.status(), list.err());
        List<String> lines = list.outLines();
        assertEquals(4, lines.size(), list.out());
        assertTrue(lines.get(0).startsWith("SEQ"), lines.get(0));
        assertTrue(lines.get(1).matches("1 +2026-12-01T10:00:00Z +http://eu:4318 +400 +\\{\"error\":\"no 0\"} +POST /v1/ingest +7"),
                lines.get(1));
        assertTrue(lines.get(2).startsWith("2 "), lines.get(2));
        // a sender's control characters are shown escaped, never sent to the terminal
        assertTrue(lines.get(3).contains("/v1/ingest?x=\\x1b[31m"), lines.get(3));
        int column = lines.get(0).indexOf("UPSTREAM");
        for (String line : lines.subList(1, 4)) {
            assertEquals("http://eu:4318", line.substring(column, column + 14), "aligned: " + line);
        }
    }

    /** Options may stand before or after the command, the commands between included. */
    @ParameterizedTest
    @ValueSource(strings = {"relay --spool-dir S dead list", "relay dead --spool-dir S list",
        "relay dead list --spool-dir S", "--spool-dir S relay dead list"})
    void theSpoolMayBeNamedAtAnyCommandOnTheWay(String commandLine) {
        String[] args = commandLine.replace("S", tmp.resolve("spool").toString()).split(" ");
        McpdRun list = run(Map.of(), args);
        assertEquals(0, list.status(), commandLine + ": " + list.err());
        assertEquals(4, list.outLines().size(), list.out());
    }

    @Test
    void listOnASpoolWithoutDeadLettersSaysSoInOneLine() throws Exception {
        Path empty = tmp.resolve("empty-spool");
        Spool.open(empty.resolve("relay")).close();
        McpdRun list = run(Map.of(), "relay", "--spool-dir", empty.toString(), "dead", "list");
        assertEquals(0, list.status(), list.err());
        assertEquals(List.of("no dead letters in " + empty.resolve("relay").resolve("dead")), list.outLines());
        McpdRun json = run(Map.of(), "relay", "--spool-dir", empty.toString(), "dead", "list", "--json");
        assertEquals(0, json.status(), json.err());
        assertEquals("", json.out(), "no object: nothing to read");
    }

    @Test
    void listJsonIsOneObjectPerLineWithFullValues() throws Exception {
        McpdRun list = run(env, "relay", "dead", "list", "--json");
        assertEquals(0, list.status(), list.err());
        List<JsonNode> letters = new ArrayList<>();
        for (String line : list.outLines()) {
            letters.add(JSON.readTree(line));
        }
        assertEquals(3, letters.size());
        JsonNode first = letters.get(0);
        assertEquals(1, first.get("seq").asLong());
        assertEquals("2026-12-01T10:00:00Z", first.get("refusedAt").asText());
        assertEquals("http://eu:4318", first.get("upstream").asText());
        assertEquals(400, first.get("status").asInt());
        assertEquals("refused with 400", first.get("reason").asText());
        assertEquals("{\"error\":\"no 0\"}\nsecond line", first.get("answer").asText());
        assertEquals("POST", first.get("method").asText());
        assertEquals("/v1/ingest", first.get("target").asText());
        assertEquals(7, first.get("bytes").asLong());
        assertEquals("key-a", first.get("idempotencyKey").asText());
        assertTrue(first.get("credential").asBoolean());
        assertFalse(list.out().contains("s3cret"), "a credential is never printed");
        assertEquals("/v1/ingest?x=\u001b[31m", letters.get(2).get("target").asText());
    }

    @Test
    void showTakesTheSeqAsItsFileIsNamedAndShowsInvisibleCharactersEscaped() throws Exception {
        try (Spool spool = Spool.open(relaySpool)) {
            spool.append(request("/v1/ingest", "key-\u202eevil", Optional.empty(), "{}")).get(10, TimeUnit.SECONDS);
            SpoolEntry entry = spool.next(Duration.ofSeconds(1)).orElseThrow();
            new DeadLetters(relaySpool).keep(entry, new DeadLetters.Refusal("http://eu:4318", 422,
                    Instant.parse("2026-12-01T10:00:09Z"), "refused with 422",
                    "a\u2028b\u200bc".getBytes(StandardCharsets.UTF_8)));
            spool.done(entry.seq());
        }
        for (String seq : List.of("4", "00000000000000000004", "00000000000000000004.entry")) {
            McpdRun show = run(env, "relay", "dead", "show", seq);
            assertEquals(0, show.status(), seq + ": " + show.err());
            assertTrue(show.out().contains("idempotency key  key-\\u202eevil"), show.out());
            assertTrue(show.out().contains("answer           a\\u2028b\\u200bc"), show.out());
            assertFalse(show.out().contains("\u202e"), "no bidirectional override reaches the terminal");
            McpdRun json = run(env, "relay", "dead", "list", "--json");
            assertEquals(0, json.status(), json.err());
            boolean escaped = !json.out().contains("\u202e") && json.out().contains("key-\\u202Eevil");
            ReliabilityReport.assertHostile("a3-l1", "a dead letter whose idempotency key holds a"
                            + " bidirectional override (U+202E), listed with dead list --json and shown",
                    "no bidirectional or control character reaches the terminal: each written as \\uXXXX",
                    escaped ? "written as \\u202E in both" : "REACHED the terminal: " + json.out(), escaped);
        }
        McpdRun bad = run(env, "relay", "dead", "show", "4.txt");
        assertEquals(2, bad.status());
    }

    @Test
    void showPrintsEverythingButTheCredentialAndAnUnknownSeqIsExitOne() {
        McpdRun show = run(env, "relay", "dead", "show", "1");
        assertEquals(0, show.status(), show.err());
        assertTrue(show.out().contains("idempotency key  key-a"), show.out());
        assertTrue(show.out().contains("answer           {\"error\":\"no 0\"}\\x0asecond line"), show.out());
        assertTrue(show.out().contains("credential       kept"), show.out());
        assertFalse(show.out().contains("s3cret"));
        McpdRun unknown = run(env, "relay", "dead", "show", "99");
        assertEquals(1, unknown.status());
        assertEquals("mcpd: 99 is not in dead/", unknown.err().strip());
    }

    @Test
    void replayOnAStoppedRelayHandsOverWithKeyAndCredentialAndTheNextStartTakesThem() throws Exception {
        McpdRun replay = run(env, "relay", "dead", "replay", "1", "99", "3");
        assertEquals(1, replay.status(), "99 is not there: " + replay.err());
        assertEquals("mcpd: 99 is not in dead/", replay.err().strip());
        assertTrue(replay.out().startsWith("replayed 2 dead letter(s) into "), replay.out());
        assertTrue(replay.out().contains("no relay runs on this spool"), replay.out());
        assertEquals(List.of(2L), new DeadLetters(relaySpool).seqsOnDisk(), "1 and 3 left dead/, 2 stayed");
        McpdRun check = run(env, "relay", "spool", "check");
        assertTrue(check.out().contains("replayed        2 in replay/, for the relay to take"), check.out());

        try (Spool spool = Spool.open(relaySpool)) {
            ReplayInbox.Adoption adoption =
                    new ReplayInbox(relaySpool).adoptInto(DirectAppend.to(spool), 1_800_000_000_000L);
            assertEquals(2, adoption.taken().size());
            assertEquals(1, adoption.taken().get(0).deadSeq());
            assertTrue(adoption.taken().get(0).seq() > 3, "a new sequence number: " + adoption.taken());
            SpoolEntry again = spool.next(Duration.ofSeconds(1)).orElseThrow();
            assertEquals("key-a", again.request().idempotencyKey());
            assertEquals(Optional.of(new Credential("Authorization", "Bearer s3cret")), again.request().credential());
            assertEquals(1_800_000_000_000L, again.request().receivedAtMillis(), "its wait starts again");
            assertArrayEquals("{\"a\":1}".getBytes(StandardCharsets.UTF_8), again.request().body());
            assertEquals("key-c", spool.next(Duration.ofSeconds(1)).orElseThrow().request().idempotencyKey());
            assertEquals(0, new ReplayInbox(relaySpool).waiting().entries(), "the inbox is empty once taken");
        }
    }

    @Test
    void aDamagedDeadLetterIsListedAsDamagedStaysInDeadAndTheOthersAreReplayed() throws Exception {
        Files.delete(relaySpool.resolve("dead/00000000000000000001.cred")); // its credential lost
        Files.write(relaySpool.resolve("dead/00000000000000000002.entry"), "not a record".getBytes(
                StandardCharsets.US_ASCII));
        McpdRun list = run(env, "relay", "dead", "list");
        assertEquals(0, list.status(), list.err());
        List<String> lines = list.outLines();
        assertEquals(4, lines.size(), list.out());
        assertTrue(lines.get(1).startsWith("1 ") && lines.get(1).contains("DAMAGED: "), lines.get(1));
        assertTrue(lines.get(2).startsWith("2 ") && lines.get(2).contains("DAMAGED: "), lines.get(2));
        assertTrue(lines.get(3).startsWith("3 ") && lines.get(3).contains("POST /v1/ingest?x="), lines.get(3));
        JsonNode first = JSON.readTree(run(env, "relay", "dead", "list", "--json").outLines().get(0));
        assertTrue(first.get("damaged").asText().contains("credential"), first.toString());
        assertTrue(run(env, "relay", "dead", "show", "1").out().startsWith("seq              1\nDAMAGED"));

        McpdRun replay = run(env, "relay", "dead", "replay", "--all");
        assertEquals(1, replay.status(), replay.out());
        assertTrue(replay.err().contains("mcpd: 1 is damaged and stays in dead/"), replay.err());
        assertTrue(replay.err().contains("mcpd: 2 is damaged and stays in dead/"), replay.err());
        assertEquals(List.of(1L, 2L), new DeadLetters(relaySpool).seqsOnDisk(), "the damaged ones stay");
        try (Spool spool = Spool.open(relaySpool)) {
            ReplayInbox.Adoption adoption =
                    new ReplayInbox(relaySpool).adoptInto(DirectAppend.to(spool), 1_800_000_000_000L);
            assertEquals(List.of(3L), adoption.taken().stream().map(ReplayInbox.Taken::deadSeq).toList(),
                    "the healthy one is replayed");
        }
    }

    @Test
    void aReplayThatDoesNotFitTheSpoolStopsAndLeavesTheRestInDead() throws Exception {
        long oneEntry = Files.size(relaySpool.resolve("dead/00000000000000000001.entry"));
        McpdRun replay = run(env, "relay", "dead", "replay", "--all", "--spool-max-bytes",
                Long.toString(oneEntry + oneEntry / 2));
        assertEquals(1, replay.status());
        assertTrue(replay.err().startsWith("mcpd: replay stopped at 2: it needs "), replay.err());
        assertTrue(replay.err().strip().endsWith("1 replayed, 2 left in dead/"), replay.err());
        assertEquals(List.of(2L, 3L), new DeadLetters(relaySpool).seqsOnDisk());
    }

    @Test
    void purgeBySeqOlderThanAndAllSaysHowMany() throws Exception {
        Files.setLastModifiedTime(relaySpool.resolve("dead/00000000000000000001.entry"),
                FileTime.from(Instant.now()));
        McpdRun bySeq = run(env, "relay", "dead", "purge", "2", "7");
        assertEquals(1, bySeq.status());
        assertEquals("purged 1 dead letter(s)", bySeq.out().strip());
        assertEquals("mcpd: 7 is not in dead/", bySeq.err().strip());
        // refused on 2026-12-01T10:00Z, more than a minute before the test runs
        McpdRun old = run(env, "relay", "dead", "purge", "--older-than", "1m");
        assertEquals(0, old.status(), old.err());
        assertEquals("purged 2 dead letter(s)", old.out().strip());
        assertEquals(List.of(), new DeadLetters(relaySpool).seqsOnDisk());
        assertEquals("purged 0 dead letter(s)", run(env, "relay", "dead", "purge", "--all").out().strip());
    }

    @Test
    void badUsageIsOneLineAndExitTwo() {
        for (String[] args : List.of(new String[] {"relay", "dead", "replay"},
                new String[] {"relay", "dead", "replay", "--all", "1"},
                new String[] {"relay", "dead", "purge", "--older-than", "ten minutes"},
                new String[] {"relay", "dead", "show", "first"},
                new String[] {"relay", "dead", "purge", "--all", "--older-than", "1d"},
                new String[] {"relay", "dead"})) {
            McpdRun bad = run(env, args);
            assertEquals(2, bad.status(), String.join(" ", args) + ": " + bad.err());
            assertEquals(1, bad.err().strip().lines().count(), String.join(" ", args) + ": " + bad.err());
        }
        assertEquals(List.of(1L, 2L, 3L), assertDoesNotChange());
        McpdRun noSpool = run(Map.of("MCPD_SPOOL_DIR", tmp.resolve("nowhere").toString()), "relay", "dead", "list");
        assertEquals(2, noSpool.status());
        assertTrue(noSpool.err().startsWith("mcpd: no spool at "), noSpool.err());
    }

    private List<Long> assertDoesNotChange() {
        try {
            return new DeadLetters(relaySpool).seqsOnDisk();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
    @Test
    void replayRefusesASpoolWhoseReplayDirectoryOthersCanWriteAndLeavesTheDeadLettersInDead() throws Exception {
        Path replay = Files.createDirectories(relaySpool.resolve("replay"));
        Files.setAttribute(replay, "unix:mode", 0777);
        McpdRun refused = run(env, "relay", "dead", "replay", "--all").assertUsageError();
        assertEquals("mcpd: spool directory " + replay + " is writable by every user (mode 0777): another user could"
                + " add entries for the relay to deliver, or remove spooled data; fix it with: chmod 700 " + replay
                + System.lineSeparator(), refused.err());
        assertEquals(List.of(1L, 2L, 3L), DeadLetters.beside(relaySpool).orElseThrow().seqsOnDisk());
        assertEquals(0, new ReplayInbox(relaySpool).waiting().entries());
    }

    @Test
    void replayAndPurgeRefuseASpoolDirectoryOthersCanWrite() throws Exception {
        Files.setAttribute(relaySpool, "unix:mode", 0777);
        for (String[] command : List.of(new String[] {"replay", "1"}, new String[] {"purge", "--all"})) {
            McpdRun refused = run(env, "relay", "dead", command[0], command[1]).assertUsageError();
            assertTrue(refused.err().endsWith("chmod 700 " + relaySpool + System.lineSeparator()), refused.err());
        }
        assertEquals(List.of(1L, 2L, 3L), DeadLetters.beside(relaySpool).orElseThrow().seqsOnDisk());
        assertFalse(Files.exists(relaySpool.resolve("dead.lock")), "refused before taking the operators' lock");
        // Reading is still allowed: an operator looks before fixing.
        assertEquals(0, run(env, "relay", "dead", "list").status());
    }
}
