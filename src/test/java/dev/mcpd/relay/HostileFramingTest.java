package dev.mcpd.relay;

import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.RawHttp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12, defects 7–9: HTTP framing a front proxy could read differently (RFC 9112, sections 6–7), {@code Host} rules, targets
 * that are no path, {@code Expect: 100-continue}, a request pipelined behind an early refusal, and what a flood of
 * distinct refusals does to the log.
 */
class HostileFramingTest {

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay(Map.of("MCPD_MAX_BODY_BYTES", "1KiB",
            "MCPD_REQUEST_TIMEOUT_SECONDS", "2"));

    private record Exchange(String answer, boolean closed) {
        int status() {
            return answer.length() >= 12 ? Integer.parseInt(answer.substring(9, 12)) : -1;
        }

        String observed() {
            return (answer.isEmpty() ? "no answer" : answer.substring(0, answer.indexOf("\r\n")))
                    + (closed ? ", connection closed" : ", connection open");
        }
    }

    private static Exchange exchange(String request) throws IOException {
        try (RawHttp raw = new RawHttp(relay.port(), 3000)) {
            String answer = raw.send(request).readResponse();
            return new Exchange(answer, raw.closedByServer());
        }
    }

    private static boolean spooled(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.ISO_8859_1);
        return relay.spooled().stream().anyMatch(e -> Arrays.equals(e.request().body(), bytes));
    }

    private static String chunked(String body) {
        return Integer.toHexString(body.length()) + "\r\n" + body + "\r\n0\r\n\r\n";
    }

    @Test
    void transferCodingsOtherThanOneFinalChunkedAreRefusedAndTheConnectionClosed() throws Exception {
        Map<String, Integer> expected = new LinkedHashMap<>();
        expected.put("Transfer-Encoding: xchunked\r\n", 400);
        expected.put("Transfer-Encoding: xchunked\r\nContent-Length: 21\r\n", 400);
        expected.put("Transfer-Encoding: gzip, chunked\r\n", 501);
        expected.put("Transfer-Encoding: chunked, chunked\r\n", 400);
        expected.put("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400);
        expected.put("Transfer-Encoding: chunked, gzip\r\n", 400);
        for (Map.Entry<String, Integer> coding : expected.entrySet()) {
            String body = "te-" + UUID.randomUUID().toString().substring(0, 8);
            Exchange got = exchange("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\n" + coding.getKey() + "\r\n"
                    + chunked(body));
            String input = coding.getKey().strip().replace("\r\n", " + ");
            assertHostile("f-" + input, "POST with " + input, coding.getValue() + ", connection closed, nothing"
                            + " spooled", got.observed() + (spooled(body) ? ", SPOOLED" : ""),
                    got.status() == coding.getValue() && got.closed() && !spooled(body));
        }
    }

    @Test
    void contentLengthWithTransferEncodingIsFramedByTheChunksAndTheConnectionClosedAfter() throws Exception {
        String body = "cl-te-" + UUID.randomUUID();
        Exchange got = exchange("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: 4\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + chunked(body));
        assertHostile("f-cl+te", "POST with Content-Length: 4 and Transfer-Encoding: chunked",
                "202 (the chunks frame the body), then the connection closed (RFC 9112 section 6.3)",
                got.observed() + (spooled(body) ? ", spooled whole" : ", NOT spooled"),
                got.status() == 202 && got.closed() && spooled(body));
    }

    @Test
    void hostRules() throws Exception {
        String twoHosts = "two-hosts-" + UUID.randomUUID();
        Exchange two = exchange("POST /v1/ingest HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: "
                + twoHosts.length() + "\r\n\r\n" + twoHosts);
        assertHostile("h-two", "POST with two Host headers", "400, connection closed, nothing spooled",
                two.observed(), two.status() == 400 && two.closed() && !spooled(twoHosts));
        String http10 = "http10-" + UUID.randomUUID();
        Exchange old = exchange("POST /v1/ingest HTTP/1.0\r\nContent-Length: " + http10.length() + "\r\n\r\n" + http10);
        assertHostile("h-1.0", "HTTP/1.0 POST without Host", "202 (HTTP/1.0 needs no Host), as docs/http-api.md says",
                old.observed(), old.status() == 202 && spooled(http10));
        try (CapturedLog log = new CapturedLog()) {
            String http11 = "http11-" + UUID.randomUUID();
            Exchange none = exchange("POST /v1/ingest HTTP/1.1\r\nContent-Length: " + http11.length() + "\r\n\r\n"
                    + http11);
            assertHostile("h-1.1", "HTTP/1.1 POST without Host", "400 with one line, no ERROR logged",
                    none.observed() + ", " + log.errors().size() + " ERROR line(s)",
                    none.status() == 400 && log.errors().isEmpty() && !spooled(http11));
        }
    }

    @Test
    void aTargetThatIsNoPathIsRefusedInOneLineWithoutAnErrorInTheLog() throws Exception {
        try (CapturedLog log = new CapturedLog()) {
            for (String target : new String[] {"v1/traces", "*", "@evil/x"}) {
                Exchange got = exchange("POST " + target + " HTTP/1.1\r\nHost: relay\r\nContent-Length: 2\r\n\r\n{}");
                String body = got.answer().substring(got.answer().indexOf("\r\n\r\n") + 4);
                assertHostile("p-" + target, "POST " + target, "400 with a one-line reason; no ERROR logged",
                        got.observed() + ", " + log.errors().size() + " ERROR line(s)",
                        got.status() == 400 && body.indexOf('\n') == body.length() - 1 && log.errors().isEmpty());
            }
        }
    }

    @Test
    void expectContinueIsAnsweredOnceTheChecksPassedAndNotWhenTheyFail() throws Exception {
        String body = "continue-" + UUID.randomUUID();
        try (RawHttp raw = new RawHttp(relay.port(), 3000)) {
            String interim = raw.send("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nExpect: 100-continue\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n").readHead();
            String answer = raw.send(body).readResponse();
            assertHostile("e-100", "POST with Expect: 100-continue, body sent only after an interim answer",
                    "100 Continue, then 202", interim.strip() + " / " + answer.lines().findFirst().orElse(""),
                    interim.startsWith("HTTP/1.1 100 ") && answer.startsWith("HTTP/1.1 202 ") && spooled(body));
        }
        try (RawHttp raw = new RawHttp(relay.port(), 3000)) {
            String answer = raw.send("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nExpect: 100-continue\r\n"
                    + "Content-Length: 5000\r\n\r\n").readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 413 "), "too large: refused, never told to continue: " + answer);
        }
    }

    @Test
    void aRequestPipelinedBehindARefusedBodyIsNeverServed() throws Exception {
        String tooLarge = "x".repeat(3000);
        Map<String, String> refusedFirst = new LinkedHashMap<>();
        refusedFirst.put("a chunked body past --max-body-bytes", "Transfer-Encoding: chunked\r\n\r\n"
                + chunked(tooLarge));
        refusedFirst.put("a Content-Length past --max-body-bytes", "Content-Length: " + tooLarge.length()
                + "\r\n\r\n" + tooLarge);
        for (Map.Entry<String, String> first : refusedFirst.entrySet()) {
            String pipelined = "pipelined-" + UUID.randomUUID();
            Exchange got = exchange("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\n" + first.getValue()
                    + "POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Length: " + pipelined.length()
                    + "\r\n\r\n" + pipelined);
            // Were it served, it would be spooled within moments of the close: it must stay absent for a second.
            boolean neverSpooled;
            try {
                await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> !spooled(pipelined));
                neverSpooled = true;
            } catch (ConditionTimeoutException spooledAfterAll) {
                neverSpooled = false;
            }
            assertHostile("e-pipe-" + (first.getKey().contains("chunked") ? "chunked" : "length"),
                    first.getKey() + ", with a second request pipelined behind it",
                    "413, connection closed; the second request never spooled (nor answered)",
                    got.observed() + (got.answer().indexOf("HTTP/1.1", 1) > 0 ? ", a second answer" : "")
                            + (neverSpooled ? ", pipelined request not spooled" : ", pipelined request SPOOLED"),
                    got.status() == 413 && got.closed() && neverSpooled);
        }
    }

    @Test
    void aFloodOfDistinctRefusedPathsWritesALineASecondAndEchoesNone() throws Exception {
        try (CapturedLog log = new CapturedLog()) {
            long started = System.nanoTime();
            boolean echoed = false;
            for (int i = 0; i < 3000; i++) {
                String path = "/relay/" + UUID.randomUUID();
                Exchange got = exchange("POST " + path + " HTTP/1.1\r\nHost: relay\r\nContent-Length: 0\r\n\r\n");
                assertEquals(405, got.status());
                echoed |= got.answer().contains(path);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            int lines = log.events("dev.mcpd.ingest.refusals", Level.WARN).size();
            assertHostile("l-flood", "3 000 POSTs to distinct /relay/<uuid> paths (405 each)",
                    "at most one log line per second for the kind; no path echoed in an answer",
                    lines + " log line(s) in " + String.format("%.1f", seconds) + " s"
                            + (echoed ? "; a path echoed" : "; no path echoed"),
                    lines <= Math.ceil(seconds) + 1 && !echoed);
        }
        assertFalse(relay.spooled().stream().anyMatch(e -> e.request().target().startsWith("/relay/")));
    }
}
