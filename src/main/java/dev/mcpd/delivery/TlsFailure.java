package dev.mcpd.delivery;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Optional;
import javax.net.ssl.SSLHandshakeException;

/**
 * A failed TLS handshake with an upstream, in an operator's words and with the option that fixes it — in place of
 * the JDK's {@code SunCertPathBuilderException: unable to find valid certification path…}.
 */
final class TlsFailure {

    private TlsFailure() {
    }

    /** What went wrong in the handshake, when {@code failure} was one. */
    static Optional<String> explain(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            String message = String.valueOf(cause.getMessage());
            if (cause instanceof CertificateExpiredException || cause instanceof CertPathValidatorException v
                    && v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
                return Optional.of("TLS: the upstream's certificate has expired (it must be renewed)");
            }
            if (cause instanceof CertificateNotYetValidException || cause instanceof CertPathValidatorException v
                    && v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID) {
                return Optional.of("TLS: the upstream's certificate is not valid yet (check the clocks)");
            }
            if (cause instanceof CertPathBuilderException || cause instanceof CertPathValidatorException) {
                return Optional.of("TLS: the upstream's certificate is not signed by an authority the relay trusts"
                        + " (name its CA with --upstream-ca)");
            }
            if (cause instanceof CertificateException && (message.startsWith("No subject alternative")
                    || message.startsWith("No name matching"))) {
                return Optional.of("TLS: the upstream's certificate does not name the host in its --upstream URL"
                        + " (its subject alternative names must)");
            }
            if (cause instanceof SSLHandshakeException && (message.contains("bad_certificate")
                    || message.contains("certificate_required") || message.contains("unknown_ca"))) {
                return Optional.of("TLS: the upstream refused the relay's client certificate"
                        + " (--upstream-client-cert and --upstream-client-key, signed by an authority it trusts)");
            }
        }
        return Optional.empty();
    }
}
