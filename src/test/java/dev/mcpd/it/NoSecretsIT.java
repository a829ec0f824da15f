package dev.mcpd.it;

import static dev.mcpd.testing.TestTuning.HTTP;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.relay.TestUpstream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * "No secret is ever printed by {@code config}, logs or metrics." The packaged relay is run with an
 * ingest key and an upstream key (an upstream URL carrying a password is refused); it takes requests with the right key, a wrong one
 * and none, fails over and delivers; then everything it prints or serves — the process log (stdout and stderr),
 * {@code /metrics}, {@code /relay/status}, {@code /readyz} and {@code mcpd config} — is searched for every secret.
 */
class NoSecretsIT {

    static final String INGEST_KEY = "ingest-key-7f3c9a2e51";
    static final String UPSTREAM_KEY = "upstream-key-b84d06e1c7";
    static final String URL_PASSWORD = "upstream-url-password";
    static final String WRONG_KEY = "wrong-key-a-sender-tried-5e2b";
    static final Duration ANSWER_DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path tmp;


    /** Every secret, by what it is, in the forms it could leak in (as is, and as HTTP Basic credentials). */
    private static Map<String, String> secrets() {
        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("the ingest key", INGEST_KEY);
        secrets.put("the upstream key", UPSTREAM_KEY);
        secrets.put("the primary upstream URL's password", URL_PASSWORD);
        secrets.put("the wrong key a sender tried", WRONG_KEY);
        secrets.put("the primary URL's userinfo as Basic credentials",
                Base64.getEncoder().encodeToString(("relayuser:" + URL_PASSWORD).getBytes(StandardCharsets.UTF_8)));
        return secrets;
    }

    private HttpResponse<String> post(PackagedJar relay, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri("/v1/ingest")).timeout(ANSWER_DEADLINE)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A GET as the operator's monitoring makes it: with the ingest key, which status and metrics ask for. */
    private String get(PackagedJar relay, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(relay.uri(path)).timeout(ANSWER_DEADLINE)
                .header("x-mcpd-key", INGEST_KEY).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void noSecretAppearsInTheLogMetricsStatusOrConfig() throws Exception {
        assertNoSecretsAnywhere(Map.of());
    }

    @Test
    void noSecretAppearsInTheLogEvenAtDebugLevel() throws Exception {
        // MCPD_LOG_LEVEL is an operator's documented switch; the no-secrets rule makes no exception for it.
        assertNoSecretsAnywhere(Map.of("MCPD_LOG_LEVEL", "DEBUG"));
    }

    @Test
    void anUpstreamUrlCarryingAPasswordIsRefusedInOneLineThatHidesIt() {
        PackagedJar.Result refused = PackagedJar.runJar(tmp, Map.of(), "relay",
                "--data", tmp.resolve("mcpd.db").toString(),
                "--upstream", "http://relayuser:" + URL_PASSWORD + "@127.0.0.1:9",
                "--upstream-key", UPSTREAM_KEY);
        assertEquals(2, refused.status(), refused::toString);
        assertEquals(1, refused.errLines().size(), refused::toString);
        assertTrue(refused.err().contains("carries a user or password: give the relay's key with --upstream-key"),
                refused::toString);
        assertTrue(!refused.err().contains(URL_PASSWORD) && !refused.out().contains(URL_PASSWORD), refused::toString);
    }

    /**
     * The primary upstream answers 503 to its first request, so the relay fails over to the secondary, which takes it
     * with the relay's key; the senders present the right key, a wrong one and none.
     */
    private void assertNoSecretsAnywhere(Map<String, String> environment) throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        try (TestUpstream primary = TestUpstream.start()
                .answer(r -> attempts.incrementAndGet() == 1 ? TestUpstream.Answer.status(503)
                        : TestUpstream.Answer.ok());
             TestUpstream secondary = TestUpstream.start()) {
            int port = PackagedJar.freePort();
            List<String> options = List.of(
                    "--listen", "127.0.0.1:" + port,
                    "--data", tmp.resolve("mcpd.db").toString(),
                    "--upstream", primary.url().toString(),
                    "--upstream", secondary.url().toString(),
                    "--ingest-key", INGEST_KEY,
                    "--upstream-key", UPSTREAM_KEY);
            Map<String, String> seen = new LinkedHashMap<>();
            try (PackagedJar relay = PackagedJar.start(tmp, port, environment, withCommand("relay", options))) {
                assertEquals(202, post(relay, "{\"n\":1}", "Authorization", "Bearer " + INGEST_KEY).statusCode());
                assertEquals(202, post(relay, "{\"n\":2}", "x-mcpd-key", INGEST_KEY).statusCode());
                assertEquals(401, post(relay, "{\"n\":3}", "Authorization", "Bearer " + WRONG_KEY).statusCode());
                assertEquals(401, post(relay, "{\"n\":4}", "x-mcpd-key", WRONG_KEY).statusCode());
                assertEquals(401, post(relay, "{\"n\":5}", "Authorization", WRONG_KEY).statusCode());
                assertEquals(401, post(relay, "{\"n\":6}").statusCode());

                // Both accepted requests delivered, after at least one failed attempt on the primary.
                try {
                    await().atMost(PATIENCE).until(() -> {
                        JsonNode status = new ObjectMapper().readTree(get(relay, "/relay/status"));
                        return status.path("spool").path("entries").asLong(-1) == 0
                                && status.path("upstreams").path(0).path("failedAttempts").asLong() >= 1;
                    });
                } catch (ConditionTimeoutException e) {
                    fail("the two accepted requests were not delivered within " + PATIENCE.toSeconds() + " s; "
                            + "status " + get(relay, "/relay/status") + "\nlog ends with:\n" + relay.logTail(30));
                }

                seen.put("/metrics", get(relay, "/metrics"));
                seen.put("/relay/status", get(relay, "/relay/status"));
                seen.put("/readyz", get(relay, "/readyz"));
                PackagedJar.Result config = PackagedJar.runJar(tmp, environment, withCommand("config", options));
                assertEquals(0, config.status(), config::toString);
                seen.put("mcpd config (stdout and stderr)", config.out() + config.err());

                int status = relay.terminate();
                assertTrue(status == 0 || status == 128 + 15, "SIGTERM stops it normally (0 or 143), got " + status);
                seen.put("the process log (stdout and stderr)", Files.readString(relay.log(), StandardCharsets.UTF_8));
            }

            assertTheSourcesSayWhatTheyShould(seen, primary.port());
            List<TestUpstream.Received> delivered = new ArrayList<>(primary.received());
            delivered.addAll(secondary.received());
            assertTrue(delivered.size() >= 2, "both accepted requests went out");
            for (TestUpstream.Received request : delivered) {
                assertEquals("Bearer " + UPSTREAM_KEY, request.header("Authorization"),
                        "the relay presents its own key to the upstream");
                assertEquals(null, request.header("x-mcpd-key"), "the sender's key is not passed on");
            }

            List<String> leaks = new ArrayList<>();
            for (Map.Entry<String, String> source : seen.entrySet()) {
                for (Map.Entry<String, String> secret : secrets().entrySet()) {
                    String text = source.getValue();
                    int at = text.indexOf(secret.getValue());
                    if (at >= 0) {
                        int lineStart = text.lastIndexOf('\n', at) + 1;
                        int lineEnd = text.indexOf('\n', at);
                        leaks.add(secret.getKey() + " appears in " + source.getKey() + ": "
                                + text.substring(lineStart, lineEnd < 0 ? text.length() : lineEnd));
                    }
                }
            }
            if (!leaks.isEmpty()) {
                fail(leaks.size() + " secret(s) printed:\n" + String.join("\n", leaks.subList(0,
                        Math.min(leaks.size(), 10))));
            }
        }
    }

    /**
     * The search is only worth something if each source says what it is about: the log has the refusals and the
     * upstream's state changes, metrics and status name the upstreams, config names the keys' roles.
     */
    private static void assertTheSourcesSayWhatTheyShould(Map<String, String> seen, int primaryPort)
            throws Exception {
        String log = seen.get("the process log (stdout and stderr)");
        assertTrue(log.contains("status=401"), "the log has the 401 refusals:\n" + log);
        assertTrue(log.contains("127.0.0.1:" + primaryPort), "the log names the primary upstream:\n" + log);
        String metrics = seen.get("/metrics");
        assertTrue(metrics.contains("mcpd_relay_delivered_total") && metrics.contains("127.0.0.1:" + primaryPort),
                "/metrics labels the upstreams:\n" + metrics);
        JsonNode status = new ObjectMapper().readTree(seen.get("/relay/status"));
        assertEquals(2, status.path("upstreams").size(), "/relay/status lists both upstreams: " + status);
        String config = seen.get("mcpd config (stdout and stderr)");
        assertTrue(config.contains("sender key required") && config.contains("upstream key presented"),
                "config says a key is set without printing it:\n" + config);
    }

    private static String[] withCommand(String command, List<String> options) {
        List<String> args = new ArrayList<>();
        args.add(command);
        args.addAll(options);
        return args.toArray(new String[0]);
    }
}
