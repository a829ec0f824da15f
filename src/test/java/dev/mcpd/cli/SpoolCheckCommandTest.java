package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.Credential;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.ReliabilityReport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 6: {@code mcpd relay spool check} reports what the spool holds and what is damaged, and changes nothing. */
class SpoolCheckCommandTest {

    @TempDir
    Path tmp;

    /** Where {@code --data <tmp>/mcpd.db} places the spool. */
    private Path spoolDir;

    @BeforeEach
    void spoolDirBesideTheData() {
        spoolDir = tmp.resolve("mcpd.spool");
    }

    private Path relaySpool() {
        return spoolDir.resolve("relay");
    }

    private static SpoolRequest request(String target) {
        return new SpoolRequest("POST", target, "application/json", "", "key" + target, Optional.empty(),
                1_700_000_000_000L, ("{\"at\":\"" + target + "\",\"pad\":\"" + "x".repeat(100) + "\"}")
                .getBytes(StandardCharsets.UTF_8));
    }

    /** Three entries waiting, one delivered, one dead letter: returns the bytes of the three waiting. */
    private long threeWaitingOneDeliveredOneDead() throws Exception {
        long bytes = 0;
        try (Spool spool = Spool.open(relaySpool())) {
            for (String target : List.of("/a", "/b", "/c", "/d", "/e")) {
                spool.append(request(target)).get(10, TimeUnit.SECONDS);
            }
            SpoolEntry delivered = spool.next(Duration.ofSeconds(1)).orElseThrow();
            spool.done(delivered.seq());
            SpoolEntry refused = spool.next(Duration.ofSeconds(1)).orElseThrow();
            new DeadLetters(relaySpool()).keep(refused, new DeadLetters.Refusal("http://up:1", 400, Instant.now(), "refused with 400",
                    new byte[0]));
            spool.done(refused.seq());
            bytes = spool.bytes();
        }
        return bytes;
    }

    private Path onlySegmentWithEntries() throws IOException {
        try (Stream<Path> files = Files.list(relaySpool())) {
            return files.filter(f -> f.getFileName().toString().endsWith(".seg")).filter(f -> {
                try {
                    return Files.size(f) > 0;
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).findFirst().orElseThrow();
        }
    }

    /** Every file and directory under the spool directory, with a hash of each file's bytes. */
    private Map<String, String> fingerprint() throws Exception {
        Map<String, String> hashes = new TreeMap<>();
        try (Stream<Path> files = Files.walk(spoolDir)) {
            for (Path file : files.toList()) {
                String name = spoolDir.relativize(file).toString();
                hashes.put(name, Files.isDirectory(file) ? "dir"
                        : HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                                .digest(Files.readAllBytes(file))) + " " + Files.getLastModifiedTime(file));
            }
        }
        return hashes;
    }

    private static String fact(McpdRun run, String name) {
        return run.outLines().stream().filter(line -> line.startsWith(String.format("%-16s", name)))
                .map(line -> line.substring(16)).findFirst().orElseThrow(() -> new AssertionError(name + " in "
                        + run.out()));
    }

    @Test
    void onACleanSpoolItPrintsOneLinePerFactAndExitsZeroChangingNothing() throws Exception {
        long bytes = threeWaitingOneDeliveredOneDead();
        Map<String, String> before = fingerprint();

        McpdRun run = run(Map.of(), "relay", "spool", "check", "--spool-dir", spoolDir.toString());

        assertEquals(0, run.status(), run.out() + run.err());
        assertEquals("", run.err());
        assertEquals(relaySpool().toString(), fact(run, "spool"));
        assertEquals("3 waiting", fact(run, "entries"));
        assertEquals(Long.toString(bytes), fact(run, "bytes"));
        assertEquals("1", fact(run, "segments"));
        assertEquals("0", fact(run, "torn tails"));
        assertEquals("0", fact(run, "damaged regions"));
        assertEquals("1 in dead/", fact(run, "dead letters"));
        assertEquals("0 in corrupt/", fact(run, "corrupt files"));
        assertEquals("ok: nothing damaged", fact(run, "result"));
        assertEquals(List.of(), run.relayStarts(), "check starts no relay");
        assertEquals(before, fingerprint(), "every file byte-identical, none added or removed");
    }

    @Test
    void theSpoolMayBeNamedBetweenSpoolAndCheck() throws Exception {
        threeWaitingOneDeliveredOneDead();
        McpdRun run = run(Map.of(), "relay", "spool", "--spool-dir", spoolDir.toString(), "check");
        assertEquals(0, run.status(), run.out() + run.err());
        assertEquals("3 waiting", fact(run, "entries"));
    }

    /** docs/spool.md's sample is what check prints for this damaged spool, with the test's folder as /data. */
    @Test
    void theSpoolPagesSampleIsWhatCheckPrintsForADamagedSpool() throws Exception {
        threeWaitingOneDeliveredOneDead();
        flipAByteInTheMiddleOf(onlySegmentWithEntries());
        String sample = DocExample.output(Path.of("docs/spool.md"), "mcpd --data /data/mcpd.db relay spool check");

        McpdRun run = run(Map.of(), "--data", tmp.resolve("mcpd.db").toString(), "relay", "spool", "check");

        assertEquals(1, run.status(), run.err());
        assertEquals(sample, run.out().replace(tmp.toString(), "/data"));
    }

    private static void flipAByteInTheMiddleOf(Path segment) throws IOException {
        long at = Files.size(segment) / 2; // inside the third of five records
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            channel.write(ByteBuffer.wrap(new byte[] {(byte) (one.get(0) ^ 0x01)}), at);
        }
    }

    @Test
    void onADamagedSpoolItSaysWhereAndExitsOneChangingNothing() throws Exception {
        threeWaitingOneDeliveredOneDead();
        Path segment = onlySegmentWithEntries();
        flipAByteInTheMiddleOf(segment);
        Map<String, String> before = fingerprint();

        McpdRun run = run(Map.of(), "relay", "spool", "check", "--spool-dir", spoolDir.toString());

        assertEquals(1, run.status(), run.out() + run.err());
        assertEquals("1", fact(run, "damaged regions"));
        String where = fact(run, "damaged region");
        assertTrue(where.startsWith(segment.getFileName() + ": record at offset ") && where.contains("checksum")
                && where.contains("not yet in corrupt/"), where);
        assertEquals("2 waiting", fact(run, "entries"), "the entries after the damage still count");
        assertTrue(fact(run, "result").startsWith("damaged: 1 damaged region(s)"), run.out());
        assertEquals(before, fingerprint(), "every file byte-identical, no corrupt/ created");

        try (Spool spool = Spool.open(relaySpool())) {
            assertEquals(1, spool.corrupted()); // the relay keeps it in corrupt/
        }
        McpdRun after = run(Map.of(), "relay", "spool", "check", "--spool-dir", spoolDir.toString());
        assertEquals(1, after.status(), after.out());
        assertEquals("1 in corrupt/", fact(after, "corrupt files"));
        assertTrue(fact(after, "damaged region").contains("; kept in corrupt/"), after.out());
    }

    @Test
    void aFlippedByteInACredentialFileIsDamageThatNamesTheEntriesItTakesTheKeyFrom() throws Exception {
        // Issue 12: the check read only segments; a bad .cred made it say "ok" while the relay would then keep every
        // entry that refers to the credential in corrupt/ at its next start.
        try (Spool spool = Spool.open(relaySpool())) {
            for (String target : List.of("/a", "/b", "/c")) {
                SpoolRequest plain = request(target);
                spool.append(new SpoolRequest(plain.method(), plain.target(), plain.contentType(),
                        plain.contentEncoding(), plain.idempotencyKey(),
                        Optional.of(new Credential("Authorization", "Bearer sender")),
                        plain.receivedAtMillis(), plain.body())).get(10, TimeUnit.SECONDS);
            }
            spool.append(request("/no-credential")).get(10, TimeUnit.SECONDS);
        }
        Path credentials;
        try (Stream<Path> files = Files.list(relaySpool())) {
            credentials = files.filter(f -> f.getFileName().toString().endsWith(".cred")).findFirst().orElseThrow();
        }
        try (FileChannel channel = FileChannel.open(credentials, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long at = channel.size() - 3; // inside the credential's value
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            channel.write(ByteBuffer.wrap(new byte[] {(byte) (one.get(0) ^ 0x01)}), at);
        }
        Map<String, String> before = fingerprint();

        McpdRun run = run(Map.of(), "relay", "spool", "check", "--spool-dir", spoolDir.toString());

        List<String> damaged = run.outLines().stream().filter(l -> l.startsWith("damaged region  "))
                .map(l -> l.substring(16)).toList();
        ReliabilityReport.assertHostile("k1", "one byte flipped in a segment's .cred file,"
                        + " then mcpd relay spool check",
                "exit 1; the damaged credential named, with the waiting entries that refer to it",
                "exit " + run.status() + "; " + String.join(" / ", damaged),
                run.status() == 1 && damaged.size() == 2 && damaged.get(0).startsWith(credentials.getFileName()
                        + ": ") && damaged.get(1).contains("3 waiting entries refer to it")
                        && damaged.get(1).contains("seq 1, 2, 3"));
        assertEquals("4 waiting", fact(run, "entries"));
        assertEquals(before, fingerprint(), "every file byte-identical");
    }

    @Test
    void aTornTailIsReportedButIsNotDamage() throws Exception {
        threeWaitingOneDeliveredOneDead();
        Path segment = onlySegmentWithEntries();
        long end = Files.size(segment);
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.APPEND)) {
            // A batch a crash tore: a record header whose length runs past the end of the file.
            channel.write(ByteBuffer.allocate(20).putInt(0x4D435052).putInt(500).putInt(0).flip());
        }
        McpdRun run = run(Map.of(), "relay", "spool", "check", "--spool-dir", spoolDir.toString());
        assertEquals(0, run.status(), run.out());
        assertEquals("1", fact(run, "torn tails"));
        assertTrue(fact(run, "torn tail").startsWith(segment.getFileName() + ": torn record at offset " + end),
                run.out());
        assertEquals("3 waiting", fact(run, "entries"));
        assertTrue(Files.exists(segment));
    }

    @Test
    void theSpoolIsFoundFromDataOrSpoolDirWrittenBeforeOrAfterTheCommandsOrFromTheEnvironment() throws Exception {
        threeWaitingOneDeliveredOneDead();
        Path data = tmp.resolve("mcpd.db");
        for (McpdRun run : List.of(
                run(Map.of(), "--spool-dir", spoolDir.toString(), "relay", "spool", "check"),
                run(Map.of(), "relay", "--spool-dir", spoolDir.toString(), "spool", "check"),
                run(Map.of(), "relay", "spool", "check", "--data", data.toString()),
                run(Map.of("MCPD_SPOOL_DIR", spoolDir.toString()), "relay", "spool", "check"),
                run(Map.of(), "relay", "--spool-dir", "/nowhere", "spool", "check", "--spool-dir",
                        spoolDir.toString()))) {
            assertEquals(0, run.status(), run.out() + run.err());
            assertEquals("3 waiting", fact(run, "entries"));
        }
    }

    @Test
    void aDirectoryWithNoSpoolIsAOneLineErrorAndCreatesNothing() throws Exception {
        Path missing = spoolDir.resolve("missing");
        run(Map.of(), "relay", "spool", "check", "--spool-dir", missing.toString())
                .assertUsageErrorLine("mcpd: no spool at " + missing.resolve("relay")
                        + ": name it with --data or --spool-dir, as for relay");
        assertTrue(Files.notExists(missing));
    }

    @Test
    void helpNamesTheExitStatusesAndRelayItselfStillStarts() {
        McpdRun help = run(Map.of(), "relay", "spool", "check", "--help");
        assertEquals(0, help.status());
        assertTrue(help.out().startsWith("Usage: mcpd relay spool check "), help.out());
        assertTrue(help.out().contains("Read-only"), help.out());
        assertTrue(help.out().contains("0   nothing is damaged"), help.out());
        assertTrue(help.out().contains("1   something is damaged"), help.out());

        McpdRun relay = run(Map.of("MCPD_UPSTREAMS", "http://a:1"), "relay");
        assertEquals(0, relay.status(), relay.err());
        assertEquals(1, relay.relayStarts().size(), "'mcpd relay' still runs the relay");
        assertEquals(2, run(Map.of(), "relay", "spool").status(), "'spool' alone names no check");
    }
}
