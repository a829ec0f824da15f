package dev.mcpd.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The key the relay gives a request that came without one. */
class IdempotencyKeyRuleTest {

    private static final byte[] BODY = "{\"events\":[{\"a\":1}]}".getBytes(StandardCharsets.UTF_8);

    @Test
    void theSameBytesAlwaysGetTheSameKey() {
        assertEquals(DerivedIdempotencyKey.of("/v1/ingest", "", BODY), DerivedIdempotencyKey.of("/v1/ingest", "", BODY.clone()));
    }

    @Test
    void theKeyIsRelayDashHexSha256OfTargetEncodingAndBody() throws Exception {
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        sha256.update("/v1/logs\0gzip\0".getBytes(StandardCharsets.UTF_8));
        sha256.update(BODY);
        String expected = "relay-" + HexFormat.of().formatHex(sha256.digest());
        assertEquals(expected, DerivedIdempotencyKey.of("/v1/logs", "gzip", BODY));
        assertEquals(6 + 64, expected.length());
    }

    @Test
    void aDifferentEncodingGivesADifferentKey() {
        assertNotEquals(DerivedIdempotencyKey.of("/v1/ingest", "", BODY), DerivedIdempotencyKey.of("/v1/ingest", "gzip", BODY));
    }

    @Test
    void aDifferentPathOrQueryOrBodyGivesADifferentKey() {
        String key = DerivedIdempotencyKey.of("/v1/ingest", "", BODY);
        assertNotEquals(key, DerivedIdempotencyKey.of("/v1/other", "", BODY));
        assertNotEquals(key, DerivedIdempotencyKey.of("/v1/ingest?tenant=b", "", BODY));
        assertNotEquals(key, DerivedIdempotencyKey.of("/v1/ingest", "", "{}".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void fieldsCannotRunIntoEachOther() {
        // Without a separator "/a" + "b" and "/ab" + "" would hash alike.
        assertNotEquals(DerivedIdempotencyKey.of("/a", "b", BODY), DerivedIdempotencyKey.of("/ab", "", BODY));
    }

    @Test
    void aSenderKeyIsOneTo255VisibleAsciiCharacters() {
        assertTrue(SenderIdempotencyKey.isValid("batch-2026-11-30T05:00:00Z#17"));
        assertTrue(SenderIdempotencyKey.isValid("x".repeat(255)));
        assertFalse(SenderIdempotencyKey.isValid(""));
        assertFalse(SenderIdempotencyKey.isValid("x".repeat(256)));
        assertFalse(SenderIdempotencyKey.isValid("has space"));
        assertFalse(SenderIdempotencyKey.isValid("tab\there"));
        assertFalse(SenderIdempotencyKey.isValid("é"));
    }
}
