package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class SecretTest {

    @Test
    void toStringNeverRevealsTheKey() {
        Secret secret = Secret.of("s3cr3t-key");
        assertEquals("[secret]", secret.toString());
        assertEquals("Optional[[secret]]", Optional.of(secret).toString());
    }

    @Test
    void matchesOnlyTheSameKey() {
        Secret secret = Secret.of("s3cr3t-key");
        assertTrue(secret.matches("s3cr3t-key"));
        assertFalse(secret.matches("s3cr3t-kez"));
        assertFalse(secret.matches("s3cr3t"), "a prefix is not the key");
        assertFalse(secret.matches("s3cr3t-key-and-more"));
        assertFalse(secret.matches(""));
        assertFalse(secret.matches(null));
    }

    @Test
    void revealGivesTheKeyForTheOnePlaceThatSendsIt() {
        assertEquals("s3cr3t-key", Secret.of("s3cr3t-key").reveal());
    }

    @Test
    void anEmptyKeyIsRefusedBecauseItWouldLetEverySenderIn() {
        assertEquals("the key is empty", assertThrows(IllegalArgumentException.class, () -> Secret.of("")).getMessage());
    }

    @Test
    void equalKeysAreEqualSecrets() {
        assertEquals(Secret.of("a"), Secret.of("a"));
        assertEquals(Secret.of("a").hashCode(), Secret.of("a").hashCode());
        assertFalse(Secret.of("a").equals(Secret.of("b")));
    }
}
