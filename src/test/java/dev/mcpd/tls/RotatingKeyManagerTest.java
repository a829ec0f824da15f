package dev.mcpd.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpd.testing.TestCertificates;
import dev.mcpd.tls.RotatingKeyManager;
import dev.mcpd.tls.TlsMaterial;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import javax.net.ssl.X509KeyManager;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The listener's identity replaced while handshakes are under way: each one finishes with the identity it chose. */
class RotatingKeyManagerTest {

    @TempDir
    Path tmp;
    private TlsMaterial.Identity first;
    private TlsMaterial.Identity second;
    private TlsMaterial.Identity third;

    @BeforeEach
    void identities() throws Exception {
        assumeTrue(TestCertificates.available(), "openssl is not on the PATH (.ci/run installs it)");
        TestCertificates ca = TestCertificates.authority(tmp, "rotation");
        first = identity(ca.server("first", "first"));
        second = identity(ca.server("second", "second"));
        third = identity(ca.server("third", "third"));
    }

    private static TlsMaterial.Identity identity(TestCertificates.Pair pair) {
        return TlsMaterial.Identity.read("test", pair.cert(), pair.key());
    }

    /** The private key the identity's own key manager presents. */
    private static byte[] keyOf(TlsMaterial.Identity identity) {
        X509KeyManager own = (X509KeyManager) identity.keyManagers().getKeyManagers()[0];
        return own.getPrivateKey(own.chooseServerAlias("EC", null, null)).getEncoded();
    }

    private static String subject(X509Certificate[] chain) {
        return chain[0].getSubjectX500Principal().getName();
    }

    @Test
    void aHandshakeThatChoseBeforeAChangeFinishesWithTheIdentityItChose() {
        RotatingKeyManager keys = new RotatingKeyManager(first.keyManagers());
        String chosenBefore = keys.chooseEngineServerAlias("EC", null, null);
        assertNotNull(chosenBefore);

        keys.use(second.keyManagers());
        String chosenAfter = keys.chooseEngineServerAlias("EC", null, null);
        assertNotEquals(chosenBefore, chosenAfter, "an alias names its identity");

        assertEquals("CN=first", subject(keys.getCertificateChain(chosenBefore)));
        assertEquals("CN=second", subject(keys.getCertificateChain(chosenAfter)));
        assertArrayEquals(keyOf(first), keys.getPrivateKey(chosenBefore).getEncoded(), "the key of the chain it chose");
        assertArrayEquals(keyOf(second), keys.getPrivateKey(chosenAfter).getEncoded());
    }

    @Test
    void anAliasTwoChangesOldIsNoLongerServedAndAStrangeOneNever() {
        RotatingKeyManager keys = new RotatingKeyManager(first.keyManagers());
        String chosen = keys.chooseEngineServerAlias("EC", null, null);
        keys.use(second.keyManagers());
        keys.use(third.keyManagers());
        assertNull(keys.getCertificateChain(chosen));
        assertNull(keys.getPrivateKey(chosen));
        assertNull(keys.getCertificateChain("no-generation"));
        assertNull(keys.getCertificateChain(null));
        assertEquals("CN=third", subject(keys.getCertificateChain(keys.chooseEngineServerAlias("EC", null, null))));
        assertNull(keys.chooseEngineServerAlias("RSA", null, null), "no RSA key: nothing to present");
    }
}
