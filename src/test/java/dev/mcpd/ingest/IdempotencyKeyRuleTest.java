package dev.mcpd.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.wire.SenderIdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The key the relay gives a request that came without one. */
class IdempotencyKeyRuleTest {

    private static final byte[] BODY = "{\"events\":[{\"a\":1}]}".getBytes(StandardCharsets.UTF_8);

    @Test
    void theSameBytesAlwaysGetTheSameKey() {
        assertEquals(IdempotencyKey.derive("/v1/ingest", "", BODY), IdempotencyKey.derive("/v1/ingest", "", BODY.clone()));
    }

    @Test
    void theKeyIsRelayDashHexSha256OfTargetEncodingAndBody() throws Exception {
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        sha256.update("/v1/logs\0gzip\0".getBytes(StandardCharsets.UTF_8));
        sha256.update(BODY);
        String expected = "relay-" + HexFormat.of().formatHex(sha256.digest());
        assertEquals(expected, IdempotencyKey.derive("/v1/logs", "gzip", BODY));
        assertEquals(6 + 64, expected.length());
    }

    @Test
    void aDifferentEncodingGivesADifferentKey() {
        assertNotEquals(IdempotencyKey.derive("/v1/ingest", "", BODY), IdempotencyKey.derive("/v1/ingest", "gzip", BODY));
    }

    @Test
    void aDifferentPathOrQueryOrBodyGivesADifferentKey() {
        String key = IdempotencyKey.derive("/v1/ingest", "", BODY);
        assertNotEquals(key, IdempotencyKey.derive("/v1/other", "", BODY));
        assertNotEquals(key, IdempotencyKey.derive("/v1/ingest?tenant=b", "", BODY));
        assertNotEquals(key, IdempotencyKey.derive("/v1/ingest", "", "{}".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void fieldsCannotRunIntoEachOther() {
        // Without a separator "/a" + "b" and "/ab" + "" would hash alike.
        assertNotEquals(IdempotencyKey.derive("/a", "b", BODY), IdempotencyKey.derive("/ab", "", BODY));
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
