package dev.mcpd.cli;

import static dev.mcpd.cli.McpdRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.relay.RelayApplication;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.TestConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/dead-letters.md's samples of {@code dead list} and {@code dead replay} are what the commands print for the
 * page's own dead letters: 17 and 18, refused 401 by {@code http://mcpd.eu.internal} at the times shown, with the
 * collector's answer to a wrong key and bodies of the sizes shown.
 */
class DeadLettersPageTest {

    static final Path PAGE = Path.of("docs/dead-letters.md");
    /** What {@code mcpd serve} answers a request without its ingest key. */
    static final String WRONG_KEY = "missing or wrong ingest key: send Authorization: Bearer KEY or x-mcpd-key: KEY\n";

    @TempDir
    Path tmp;
    private Map<String, String> env;

    @BeforeEach
    void seventeenAndEighteenRefusedForTheirKey() throws Exception {
        Path relaySpool = tmp.resolve("spool/relay");
        env = Map.of("MCPD_SPOOL_DIR", tmp.resolve("spool").toString());
        try (Spool spool = Spool.open(relaySpool)) {
            for (int n = 1; n <= 18; n++) {
                spool.append(request(n == 17 ? 812 : n == 18 ? 790 : 100)).get(10, TimeUnit.SECONDS);
            }
            DeadLetters dead = new DeadLetters(relaySpool);
            for (int n = 1; n <= 18; n++) {
                SpoolEntry entry = spool.next(Duration.ofSeconds(1)).orElseThrow();
                if (entry.seq() >= 17) {
                    dead.keep(entry, new DeadLetters.Refusal("http://mcpd.eu.internal", 401,
                            Instant.parse(entry.seq() == 17 ? "2026-12-01T09:14:03.101Z" : "2026-12-01T09:14:03.164Z"),
                            "refused with 401", WRONG_KEY.getBytes(StandardCharsets.UTF_8)));
                }
                spool.done(entry.seq()); // 1 to 16 delivered
            }
        }
    }

    /** An ingest request whose JSON body is {@code bytes} long. */
    private static SpoolRequest request(int bytes) {
        String start = "{\"events\":[{\"pad\":\"";
        String end = "\"}]}";
        String body = start + "x".repeat(bytes - start.length() - end.length()) + end;
        return new SpoolRequest("POST", "/v1/ingest", "application/json", "", "key-" + bytes, Optional.empty(),
                1_700_000_000_000L, body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theListIsThePagesSample() throws Exception {
        McpdRun list = run(env, "relay", "dead", "list");
        assertEquals(0, list.status(), list.err());
        assertEquals(DocExample.block(PAGE, "dead-list"), list.out().replace(System.lineSeparator(), "\n"));
    }

    @Test
    void theReplayIntoARunningRelayIsThePagesLineWithItsOwnNewNumbers() throws Exception {
        String sample = DocExample.block(PAGE, "dead-replay").strip();
        // Only the new sequence numbers (those after "17 as ", "18 as ") depend on the spool the relay runs on.
        Pattern line = Pattern.compile(Stream.of(sample.split("(?<=[0-9] as )[0-9]+", -1)).map(Pattern::quote)
                .collect(Collectors.joining("[0-9]+")));
        assertTrue(sample.contains("17 as ") && sample.contains("18 as "), sample);
        try (RelayApplication relay = RelayApplication.start(TestConfig.on(tmp.resolve("mcpd.db"),
                Map.of("MCPD_UPSTREAMS", "http://127.0.0.1:9"), env))) {
            McpdRun replay = run(env, "relay", "dead", "replay", "17", "18");
            assertEquals(0, replay.status(), replay.err());
            assertTrue(line.matcher(replay.out().strip()).matches(), replay.out() + " is not like " + sample);
        }
    }
}
