package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.config.Secret;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.StepServer;
import java.util.Optional;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link SenderKeyCheck}: {@code Authorization: Bearer KEY} or {@code x-mcpd-key: KEY}, else 401. */
class SenderKeyCheckTest {

    private static final String KEY = "s3cret-key";
    private static final String WRONG = "missing or wrong ingest key: send Authorization: Bearer KEY or x-mcpd-key: KEY";
    private static final SenderKeyCheck CHECK = new SenderKeyCheck(Optional.of(Secret.of(KEY)));
    private static StepServer server;

    @BeforeAll
    static void start() {
        // The step, then what admits() says of the same request (the probes' use of it).
        server = StepServer.running(exchange -> exchange.setProperty("admits",
                CHECK.admits(VertxExchange.request(exchange))), CHECK);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void theRightBearerTokenPassesAndIsTheVerifiedHeader() throws Exception {
        Exchange passed = passing("Authorization: Bearer " + KEY + "\r\n");
        assertEquals("Authorization", SenderKeyCheck.verifiedBy(passed));
        assertEquals(Boolean.TRUE, passed.getProperty("admits"));
    }

    @Test
    void theBearerSchemeIsCaseInsensitiveAndTheTokenTrimmed() throws Exception {
        assertEquals("Authorization", SenderKeyCheck.verifiedBy(passing("Authorization: bEARER   " + KEY + "  \r\n")));
    }

    @Test
    void theRightXMcpdKeyPassesAndIsTheVerifiedHeader() throws Exception {
        assertEquals("x-mcpd-key", SenderKeyCheck.verifiedBy(passing("x-mcpd-key: " + KEY + "\r\n")));
    }

    @Test
    void aRightXMcpdKeyBesideAWrongAuthorizationIsVerifiedAloneSoTheWrongOneIsNotForwarded() throws Exception {
        assertEquals("x-mcpd-key", SenderKeyCheck.verifiedBy(
                passing("Authorization: Bearer not-it\r\nx-mcpd-key: " + KEY + "\r\n")));
    }

    @Test
    void bothRightIsVerifiedByAuthorization() throws Exception {
        assertEquals("Authorization", SenderKeyCheck.verifiedBy(
                passing("Authorization: Bearer " + KEY + "\r\nx-mcpd-key: " + KEY + "\r\n")));
    }

    @Test
    void noKeyIs401BeforeTheBodyIsRead() throws Exception {
        IngestRefusal refusal = refused("");
        assertEquals(401, refusal.status());
        assertEquals(IngestRefusal.Kind.UNAUTHORIZED, refusal.kind());
        assertEquals(WRONG, refusal.reason());
        assertTrue(refusal.bodyUnread());
    }

    @Test
    void aWrongKeyOrAnotherSchemeOrABareKeyIs401() throws Exception {
        for (String presented : new String[] {"Authorization: Bearer " + KEY + "x\r\n", "x-mcpd-key: s3cret\r\n",
                "Authorization: Basic " + KEY + "\r\n", "Authorization: " + KEY + "\r\n", "Authorization: Bearer\r\n",
                "Authorization: Bearer" + KEY + "\r\n", "x-mcpd-key: Bearer " + KEY + "\r\n"}) {
            IngestRefusal refusal = refused(presented);
            assertEquals(401, refusal.status(), presented);
            assertEquals(WRONG, refusal.reason());
        }
    }

    @Test
    void aRefusedRequestIsNotAdmittedEither() throws Exception {
        send("x-mcpd-key: nope\r\n");
        assertEquals(Boolean.FALSE, server.next().exchange().getProperty("admits"));
    }

    @Test
    void withoutAConfiguredKeyThePortIsOpenAndNothingIsVerified() throws Exception {
        SenderKeyCheck open = new SenderKeyCheck(Optional.empty());
        try (StepServer openServer = StepServer.running(open)) {
            try (RawHttp http = new RawHttp(openServer.port(), 5_000)) {
                http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nx-mcpd-key: anything\r\n\r\n")
                        .readResponse();
            }
            StepServer.Outcome outcome = openServer.next();
            assertTrue(outcome.passed());
            assertNull(SenderKeyCheck.verifiedBy(outcome.exchange()));
            assertTrue(open.admits(VertxExchange.request(outcome.exchange())));
        }
    }

    private static Exchange passing(String headers) throws Exception {
        send(headers);
        StepServer.Outcome outcome = server.next();
        assertTrue(outcome.passed(), headers);
        return outcome.exchange();
    }

    private static IngestRefusal refused(String headers) throws Exception {
        send(headers);
        StepServer.Outcome outcome = server.next();
        assertFalse(outcome.passed(), headers);
        assertNull(SenderKeyCheck.verifiedBy(outcome.exchange()));
        return outcome.refused();
    }

    private static void send(String headers) throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n" + headers + "\r\n").readResponse();
        }
    }
}
