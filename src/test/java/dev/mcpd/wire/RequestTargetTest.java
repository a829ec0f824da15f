package dev.mcpd.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.mcpd.wire.RequestTarget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Issue 12, defects 1 and 2: what a request target may be, decided once, at ingest and again at delivery. */
class RequestTargetTest {

    private static String parsed(String raw) throws RequestTarget.InvalidTarget {
        return RequestTarget.parse(raw).text();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/traces", "/v1/ingest?tenant=a&x=%20b", "/", "/a/b/", "/~user/a-b_c.d",
            "/a:b@c!$&'()*+,;=", "/v1/ingest?q=a/b?c", "/x%2Fy", "/x?"})
    void anOrdinaryOriginFormTargetIsKeptAsSent(String target) throws Exception {
        assertEquals(target, parsed(target));
    }

    @ParameterizedTest
    @CsvSource({
        "http://127.0.0.1:9999/x, /x",
        "HTTPS://evil.example/v1/traces?a=1, /v1/traces?a=1",
        "http://host, /",
        "http://host?x=1, /?x=1",
    })
    void anAbsoluteFormTargetIsReducedToItsPathAndQuery(String raw, String expected) throws Exception {
        assertEquals(expected, parsed(raw));
    }

    @ParameterizedTest
    @CsvSource({
        "/../../etc/passwd, /etc/passwd",
        "/v1/traces/../../x, /x",
        "/%2e%2e/%2E%2e/etc/passwd, /etc/passwd",
        "/a/./b/., /a/b/",
        "/a/b/.., /a/",
        "/%7euser/%41, /~user/A",
        "/x%2fy, /x%2Fy",
        "/v1/x?../../y, /v1/x?../../y",
    })
    void thePathIsNormalisedSoItCannotClimbOutOfTheUpstreamsPath(String raw, String expected) throws Exception {
        assertEquals(expected, parsed(raw));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "*", "v1/traces", "0/a://b/x", ":9999/a://b/x", ".evil.net/x", "@host/x",
            "ftp://host/x", "/x y", "/x\u0000y", "/x\\y", "/{{env:HOME}}", "/x|y", "/x#frag", "/caf\u00e9",
            "/100%", "/%zz", "/%4", "/x?a=\"b\""})
    void anyOtherTargetIsRefusedWithAReasonThatQuotesNothingOfIt(String raw) {
        RequestTarget.InvalidTarget refused = assertThrows(RequestTarget.InvalidTarget.class,
                () -> RequestTarget.parse(raw));
        assertFalse(refused.getMessage().contains("\n"));
        if (raw.length() > 3) {
            assertFalse(refused.getMessage().contains(raw), refused.getMessage());
        }
    }

    @Test
    void thePathIsWhatComesBeforeTheQuery() throws Exception {
        assertEquals("/v1/traces", RequestTarget.parse("/v1/traces?x=/v1/logs").path());
    }
}
