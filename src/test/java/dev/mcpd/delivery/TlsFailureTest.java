package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.util.Optional;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/**
 * The JDK's handshake failures, as its trust manager and Netty wrap them, read in an operator's words (the
 * untrusted-authority case against a real server is in TlsTest).
 */
class TlsFailureTest {

    private static SSLHandshakeException handshake(Throwable cause) {
        SSLHandshakeException e = new SSLHandshakeException("PKIX path building failed: " + cause);
        e.initCause(cause);
        return e;
    }

    @Test
    void eachHandshakeFailureNamesWhatIsWrongAndWhatFixesIt() {
        assertEquals(Optional.of("TLS: the upstream's certificate is not signed by an authority the relay trusts"
                + " (name its CA with --upstream-ca)"), TlsFailure.explain(handshake(new CertPathBuilderException(
                "unable to find valid certification path to requested target"))));
        assertEquals(Optional.of("TLS: the upstream's certificate has expired (it must be renewed)"),
                TlsFailure.explain(handshake(new CertPathValidatorException("validity check failed",
                        new CertificateExpiredException("NotAfter: Mon Dec 01 10:00:00 UTC 2026"), null, -1,
                        CertPathValidatorException.BasicReason.EXPIRED))));
        assertEquals(Optional.of("TLS: the upstream's certificate does not name the host in its --upstream URL (its"
                + " subject alternative names must)"), TlsFailure.explain(handshake(new CertificateException(
                "No subject alternative names matching IP address 10.0.0.7 found"))));
        assertTrue(TlsFailure.explain(new SSLHandshakeException("Received fatal alert: bad_certificate")).orElseThrow()
                .contains("--upstream-client-cert"));
        assertEquals(Optional.empty(), TlsFailure.explain(new ConnectException("Connection refused")));
    }
}
