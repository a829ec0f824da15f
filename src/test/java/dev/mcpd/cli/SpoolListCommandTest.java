package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.logs.SenderText;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.relay.TestUpstream;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.Ports;
import dev.mcpd.testing.TestConfig;
import dev.mcpd.upstream.Backoff;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mcpd relay spool list}: the oldest waiting entries, read from the spool, with the running relay's attempts. */
class SpoolListCommandTest {

    /** Short backoff, and health checks an hour apart: only deliveries change an upstream's state in these tests. */
    private static final RelayApplication.Tuning TUNING = new RelayApplication.Tuning(
            new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), Math::random), Duration.ofHours(1),
            Duration.ofSeconds(30), Map.of("mcpd.delivery.timeout-ms", "1000"));
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The sample's command in docs/spool.md; the lines after it, up to the fence, are what it prints. */
    private static final String SAMPLE_COMMAND = "mcpd --data /data/mcpd.db relay spool list --limit 2";
    /** The upstream the sample shows; the test's own has a loopback address and a free port. */
    private static final String SAMPLE_UPSTREAM = "http://collector.eu.internal:4318";
    /** An age in the AGE column (42s, 3m05s, 2h07m, 12d03h) with the spaces that pad it. */
    private static final Pattern AGE = Pattern.compile("(?m)^(\\d+ +)\\d+[smhd](?:\\d\\d[smh])? +");

    @TempDir
    Path tmp;

    private Path data() {
        return tmp.resolve("mcpd.db");
    }

    private Path relaySpool() {
        return tmp.resolve("mcpd.spool/relay");
    }

    /** The command's environment: the spool beside --data, and where the relay listens (or would). */
    private Map<String, String> cli(String listen) {
        return Map.of("MCPD_DATA", data().toString(), "MCPD_LISTEN", listen);
    }

    private static void ingest(String listen, String target, String body) throws Exception {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + listen + target))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), answer.body());
    }

    private static JsonNode relaySpool(String listen) throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create("http://" + listen + "/relay/spool")).GET()
                .build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    /** Entries written straight to a stopped relay's spool, oldest first. */
    private void spooled(String... targets) throws Exception {
        try (Spool spool = Spool.open(relaySpool())) {
            for (String target : targets) {
                spool.append(new SpoolRequest("POST", target, "application/json", "", "key" + target,
                        Optional.empty(), System.currentTimeMillis(), "{\"n\":1}".getBytes(StandardCharsets.UTF_8)))
                        .get(10, TimeUnit.SECONDS);
            }
        }
    }

    /** A table row's columns: the last (the failure) may hold single spaces, columns are two or more apart. */
    private static String[] columns(String row) {
        return row.split(" {2,}", 7);
    }

    private static String noRelayLine(String listen) {
        return "no relay answered at " + listen + ", so attempts are unknown";
    }

    @Test
    void entriesWrittenWhileTheUpstreamIsDownAreListedOldestFirstWithTheRunningRelaysAttempts() throws Exception {
        try (TestUpstream down = TestUpstream.refusing()) {
            Map<String, String> environment = new HashMap<>(Map.of("MCPD_UPSTREAMS", down.url().toString(),
                    "MCPD_WORKERS", "3"));
            McpdConfig config = TestConfig.on(data(), Map.of(), environment);
            try (RelayApplication relay = RelayApplication.start(config, TUNING)) {
                String listen = relay.address().toString();
                ingest(listen, "/v1/ingest?n=1", "{\"n\":1}");
                ingest(listen, "/v1/ingest?n=2", "{\"n\":22}");
                ingest(listen, "/v1/ingest?n=3", "{\"n\":333}");
                await("every entry tried at least once").atMost(PATIENCE)
                        .until(() -> relaySpool(listen).get("entries").size() == 3);

                McpdRun table = run(cli(listen), "relay", "spool", "list");
                assertEquals(0, table.status(), table.err());
                assertEquals("", table.err());
                List<String> lines = table.outLines();
                assertEquals(5, lines.size(), table.out());
                assertEquals(List.of("SEQ", "AGE", "METHOD", "TARGET", "BYTES", "ATTEMPTS", "LAST FAILURE"),
                        List.of(columns(lines.get(0))));
                for (int i = 1; i <= 3; i++) {
                    String[] row = columns(lines.get(i));
                    assertEquals(Integer.toString(i), row[0], "oldest first: " + table.out());
                    assertEquals("POST", row[2]);
                    assertEquals("/v1/ingest?n=" + i, row[3]);
                    assertEquals(Integer.toString(6 + i), row[4], "body bytes");
                    assertTrue(Integer.parseInt(row[5]) >= 1, table.out());
                    assertTrue(row[6].startsWith("upstream=" + down.url() + " "), row[6]);
                    assertTrue(row[6].toLowerCase(Locale.ROOT).contains("refused"), row[6]);
                }
                assertEquals("0 more wait beyond --limit 20 (3 waiting in all)", lines.get(4));

                McpdRun json = run(cli(listen), "relay", "spool", "list", "--json");
                assertEquals(0, json.status(), json.err());
                JsonNode document = JSON.readTree(json.out());
                assertEquals(3, document.get("waiting").asLong());
                assertEquals(0, document.get("more").asLong());
                assertTrue(document.get("attemptsKnown").asBoolean());
                JsonNode entries = document.get("entries");
                assertEquals(3, entries.size());
                for (int i = 0; i < 3; i++) {
                    JsonNode entry = entries.get(i);
                    String[] row = columns(lines.get(i + 1));
                    assertEquals(i + 1, entry.get("seq").asLong());
                    assertEquals("POST", entry.get("method").asText());
                    assertEquals("/v1/ingest?n=" + (i + 1), entry.get("target").asText());
                    assertEquals(7 + i, entry.get("bytes").asLong());
                    assertTrue(entry.get("attempts").asInt() >= Integer.parseInt(row[5]), "attempts only grow");
                    assertTrue(entry.get("lastFailure").asText().startsWith("upstream=" + down.url() + " "));
                    assertTrue(entry.get("ageSeconds").asLong() >= 0);
                    assertTrue(entry.get("receivedAt").asText().endsWith("Z"));
                }
            }
        }
    }

    @Test
    void limitListsTheOldestAndSaysHowManyMoreWait() throws Exception {
        spooled("/a", "/b", "/c", "/d", "/e");
        String listen = "127.0.0.1:" + Ports.free();
        McpdRun run = run(cli(listen), "relay", "spool", "list", "--limit", "2");
        assertEquals(0, run.status(), run.err());
        List<String> lines = run.outLines();
        assertEquals(List.of("1", "2"), List.of(columns(lines.get(1))[0], columns(lines.get(2))[0]));
        assertEquals("3 more wait beyond --limit 2 (5 waiting in all)", lines.get(3));
        assertEquals(5, lines.size(), run.out());
        assertEquals("1 more waits beyond --limit 4 (5 waiting in all)",
                run(cli(listen), "relay", "spool", "list", "--limit=4").outLines().get(5));

        JsonNode document = JSON.readTree(run(cli(listen), "relay", "spool", "list", "--limit", "2", "--json").out());
        assertEquals(2, document.get("entries").size());
        assertEquals(3, document.get("more").asLong());
        assertEquals(2, document.get("limit").asInt());
    }

    @Test
    void withTheRelayStoppedAttemptsAreADashAndOneLineSaysWhy() throws Exception {
        String listen;
        try (TestUpstream down = TestUpstream.refusing()) {
            McpdConfig config = TestConfig.on(data(), Map.of(), Map.of("MCPD_UPSTREAMS", down.url().toString()));
            try (RelayApplication relay = RelayApplication.start(config, TUNING)) {
                listen = relay.address().toString();
                ingest(listen, "/v1/ingest?n=1", "{}");
                ingest(listen, "/v1/ingest?n=2", "{}");
                await().atMost(PATIENCE).until(() -> relaySpool(listen).get("entries").size() >= 1);
            }
        }
        McpdRun run = run(cli(listen), "relay", "spool", "list");
        assertEquals(0, run.status(), run.err());
        assertEquals("", run.err());
        List<String> lines = run.outLines();
        assertEquals(5, lines.size(), run.out());
        assertEquals(noRelayLine(listen), lines.get(4), run.out());
        for (String line : lines.subList(1, 3)) {
            assertEquals("-", columns(line)[5], line);
            assertEquals("-", columns(line)[6], line);
        }
        JsonNode document = JSON.readTree(run(cli(listen), "relay", "spool", "list", "--json").out());
        assertFalse(document.get("attemptsKnown").asBoolean());
        assertEquals(noRelayLine(listen), document.get("attemptsUnknownBecause").asText());
        assertTrue(document.get("entries").get(0).get("attempts").isNull());
        assertTrue(document.get("entries").get(0).get("lastFailure").isNull());
    }

    @Test
    void aRelayWithAnIngestKeyIsAskedWithTheKeyAndWithoutItSaysSo() throws Exception {
        try (TestUpstream down = TestUpstream.refusing()) {
            McpdConfig config = TestConfig.on(data(), Map.of(), Map.of("MCPD_UPSTREAMS", down.url().toString(),
                    "MCPD_INGEST_KEY", "s3cret-key"));
            try (RelayApplication relay = RelayApplication.start(config, TUNING)) {
                String listen = relay.address().toString();
                HttpResponse<String> accepted = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + listen
                        + "/v1/ingest")).header("x-mcpd-key", "s3cret-key").POST(HttpRequest.BodyPublishers
                        .ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(202, accepted.statusCode(), accepted.body());
                assertEquals(401, HTTP.send(HttpRequest.newBuilder(URI.create("http://" + listen + "/relay/spool"))
                        .GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode(), "no key, no targets");

                List<String> without = run(cli(listen), "relay", "spool", "list").outLines();
                assertEquals("the relay at " + listen + " answered 401: give its --ingest-key (or MCPD_INGEST_KEY) to"
                        + " see attempts; they are unknown", without.get(without.size() - 1));
                Map<String, String> keyed = new HashMap<>(cli(listen));
                keyed.put("MCPD_INGEST_KEY", "s3cret-key");
                await().atMost(PATIENCE).until(() -> !columns(run(keyed, "relay", "spool", "list").outLines().get(1))[5]
                        .equals("0"));
                McpdRun with = run(keyed, "relay", "spool", "list");
                assertEquals(3, with.outLines().size(), with.out());
                assertTrue(columns(with.outLines().get(1))[6].startsWith("upstream=" + down.url()), with.out());
            }
        }
    }

    @Test
    void aBadLimitIsAOneLineUsageError() {
        for (String limit : List.of("0", "-3", "x", "", "1.5", "99999999999")) {
            run(cli("127.0.0.1:9"), "relay", "spool", "list", "--limit=" + limit).assertUsageErrorLine(
                    "mcpd: invalid value for --limit: \"" + limit + "\" is not a whole number of at least 1"
                            + " (see 'mcpd relay spool list --help')");
        }
    }

    @Test
    void noSpoolIsTheOneLineErrorOfSpoolCheckAndAnEmptySpoolSaysSo() throws Exception {
        run(cli("127.0.0.1:9"), "relay", "spool", "list").assertUsageErrorLine("mcpd: no spool at " + relaySpool()
                + ": name it with --data or --spool-dir, as for relay");
        assertTrue(Files.notExists(relaySpool()));
        spooled();
        McpdRun empty = run(cli("127.0.0.1:9"), "relay", "spool", "list");
        assertEquals(0, empty.status(), empty.err());
        assertEquals("no entries wait in " + relaySpool() + System.lineSeparator(), empty.out());
    }

    @Test
    void aHostileTargetIsPrintedEscapedInTheTableAndInTheJson() throws Exception {
        String hostile = "/v1/ingest?who=\u202Eevil\nForged: 1\u001b[31m";
        spooled(hostile);
        McpdRun run = run(cli("127.0.0.1:" + Ports.free()), "relay", "spool", "list");
        assertEquals(0, run.status(), run.err());
        assertEquals(4, run.outLines().size(), "header, the entry, more, no relay: " + run.out());
        assertEquals(SenderText.quote(hostile), columns(run.outLines().get(1))[3]);
        assertTrue(run.out().contains("/v1/ingest?who=\\u202eevil\\x0aForged: 1\\x1b[31m"), run.out());
        McpdRun json = run(cli("127.0.0.1:" + Ports.free()), "relay", "spool", "list", "--json");
        assertTrue(json.out().chars().allMatch(c -> c == '\n' || c >= 0x20 && c < 0x7f), json.out());
        assertEquals(hostile, JSON.readTree(json.out()).get("entries").get(0).get("target").asText(),
                "a script reads the target as the sender wrote it");
    }

    @Test
    void aListenerThatSpeaksHttpsIsNotAskedAndTheLineSaysSo() throws Exception {
        spooled("/a");
        Path cert = Files.writeString(tmp.resolve("cert.pem"), "");
        Path key = Files.writeString(tmp.resolve("key.pem"), "");
        Map<String, String> environment = new HashMap<>(cli("0.0.0.0:4317"));
        environment.put("MCPD_TLS_CERT", cert.toString());
        environment.put("MCPD_TLS_KEY", key.toString());
        McpdRun run = run(environment, "relay", "spool", "list");
        assertEquals(0, run.status(), run.err());
        assertEquals("the relay's listener at 127.0.0.1:4317 speaks HTTPS (--tls-cert), which spool list does not"
                + " connect to, so attempts are unknown (GET https://127.0.0.1:4317/relay/spool shows them)",
                run.outLines().get(run.outLines().size() - 1));
    }

    @Test
    void helpAndTheSpoolCommandsErrorNameList() {
        McpdRun help = run(Map.of(), "relay", "spool", "--help");
        assertEquals(0, help.status());
        assertTrue(help.out().contains("  list "), help.out());
        assertTrue(help.out().contains("  check "), help.out());
        McpdRun listHelp = run(Map.of(), "relay", "spool", "list", "--help");
        assertTrue(listHelp.out().startsWith("Usage: mcpd relay spool list "), listHelp.out());
        assertTrue(listHelp.out().contains("--limit=N"), listHelp.out());
        McpdRun bare = run(Map.of(), "relay", "spool");
        assertEquals(2, bare.status());
        assertEquals("mcpd: name a spool command: check or list (see 'mcpd relay spool --help')"
                + System.lineSeparator(), bare.err());
        assertTrue(run(Map.of(), "--help").out().contains("  relay spool list    the oldest entries waiting"));
    }

    /**
     * docs/spool.md's sample is what the program prints for the spool it describes: three entries, the oldest tried
     * once and answered 503 with Retry-After (one lane, so the others wait untried). Normalised before comparing:
     * each age with its padding (it grows as the test runs), and the test upstream's URL written as the sample's.
     */
    @Test
    void theDocsSampleIsTheProgramsOutput() throws Exception {
        String sample = DocExample.output(Path.of("docs/spool.md"), SAMPLE_COMMAND);
        try (TestUpstream busy = TestUpstream.start().answer(r -> TestUpstream.Answer.status(503)
                .withHeader("Retry-After", "600"))) {
            McpdConfig config = TestConfig.on(data(), Map.of(), Map.of("MCPD_UPSTREAMS", busy.url().toString(),
                    "MCPD_WORKERS", "1"));
            try (RelayApplication relay = RelayApplication.start(config, TUNING)) {
                String listen = relay.address().toString();
                ingest(listen, "/v1/ingest?tenant=eu", "{\"event\":\"checkout\",\"n\":1}");
                await().atMost(PATIENCE).until(() -> relaySpool(listen).get("entries").size() == 1);
                ingest(listen, "/v1/ingest?tenant=us", "{\"event\":\"checkout\",\"n\":2}");
                ingest(listen, "/v1/ingest?tenant=eu", "{\"event\":\"refund\",\"n\":3}");
                McpdRun run = run(cli(listen), "relay", "spool", "list", "--limit", "2");
                assertEquals(0, run.status(), run.err());
                assertEquals(normalised(sample), normalised(run.out().replace(busy.url().toString(),
                        SAMPLE_UPSTREAM)));
            }
        }
    }

    private static String normalised(String listing) {
        return AGE.matcher(listing).replaceAll("$1<age> ");
    }
}
