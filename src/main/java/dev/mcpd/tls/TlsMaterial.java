package dev.mcpd.tls;

import dev.mcpd.config.ConfigException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.impl.KeyStoreHelper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * PEM files read into what Vert.x and the JDK take: Vert.x's {@link PemKeyCertOptions} and
 * {@link PemTrustOptions} parse them (PKCS#8 and PKCS#1 keys, certificate chains) — built from the bytes read here, so
 * that the same bytes are what is checked, compared when the files change, and handed over.
 */
public final class TlsMaterial {

    private TlsMaterial() {
    }

    /** A certificate chain and its private key: what a listener or a client presents. */
    public record Identity(Path certFile, Path keyFile, byte[] cert, byte[] key, X509Certificate leaf) {

        /** Reads and checks both files: a chain, a key, and the key is the one of the chain's first certificate. */
        public static Identity read(String option, Path certFile, Path keyFile) {
            byte[] cert = bytes(option, certFile);
            byte[] key = bytes(option, keyFile);
            List<X509Certificate> chain = certificates(option, certFile, cert);
            PemKeyCertOptions options = new PemKeyCertOptions().addCertValue(Buffer.buffer(cert))
                    .addKeyValue(Buffer.buffer(key));
            PrivateKey privateKey;
            try {
                KeyStore store = options.loadKeyStore(null);
                String alias = Collections.list(store.aliases()).get(0);
                privateKey = (PrivateKey) store.getKey(alias, KeyStoreHelper.DUMMY_PASSWORD.toCharArray());
            } catch (Exception e) {
                throw new ConfigException("invalid value for " + option + ": " + keyFile + " holds no private key"
                        + " in PEM (PKCS#8, PKCS#1 RSA or SEC1 EC)");
            }
            if (!matches(privateKey, chain.get(0))) {
                throw new ConfigException("invalid value for " + option + ": the key in " + keyFile + " is not the"
                        + " one of the certificate in " + certFile);
            }
            return new Identity(certFile, keyFile, cert, key, chain.get(0));
        }

        public PemKeyCertOptions options() {
            return new PemKeyCertOptions().addCertValue(Buffer.buffer(cert)).addKeyValue(Buffer.buffer(key));
        }

        /** When the certificate presented stops being valid. */
        public Instant notAfter() {
            return leaf.getNotAfter().toInstant();
        }

        /** Same bytes in both files. */
        public boolean sameAs(Identity other) {
            return other != null && Arrays.equals(cert, other.cert) && Arrays.equals(key, other.key);
        }

        public KeyManagerFactory keyManagers() {
            try {
                return options().getKeyManagerFactory(null);
            } catch (Exception e) {
                throw new IllegalStateException("a key read and checked before cannot be used: " + e, e);
            }
        }
    }

    /** Certificate authorities: whose signatures are trusted. */
    public record Authorities(Path file, byte[] pem) {

        public static Authorities read(String option, Path file) {
            byte[] pem = bytes(option, file);
            certificates(option, file, pem);
            return new Authorities(file, pem);
        }

        public PemTrustOptions options() {
            return new PemTrustOptions().addCertValue(Buffer.buffer(pem));
        }

        public boolean sameAs(Authorities other) {
            return other != null && Arrays.equals(pem, other.pem);
        }

        /** The JDK's trust managers for these authorities (Vert.x's would need a Vert.x instance to read bytes). */
        public TrustManagerFactory trustManagers() {
            try {
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                int n = 0;
                for (X509Certificate authority : certificates("authorities", file, pem)) {
                    store.setCertificateEntry("authority-" + n++, authority);
                }
                TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                factory.init(store);
                return factory;
            } catch (Exception e) {
                throw new IllegalStateException("authorities read and checked before cannot be used: " + e, e);
            }
        }
    }

    /** A JDK SSL context presenting {@code identity} (if any) and trusting {@code authorities} (else the JDK's). */
    public static SSLContext sslContext(Optional<Identity> identity,
                                        Optional<Authorities> authorities) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(identity.map(i -> i.keyManagers().getKeyManagers()).orElse(null),
                    authorities.map(a -> a.trustManagers().getTrustManagers()).orElse(null), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot make a TLS context: " + e, e);
        }
    }

    private static byte[] bytes(String option, Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ConfigException("invalid value for " + option + ": cannot read " + file + ": " + e.getMessage());
        }
    }

    private static List<X509Certificate> certificates(String option, Path file, byte[] pem) {
        Collection<? extends Certificate> found;
        try {
            found = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
        } catch (CertificateException e) {
            throw new ConfigException("invalid value for " + option + ": " + file + " holds no X.509 certificate in"
                    + " PEM (\"-----BEGIN CERTIFICATE-----\")");
        }
        if (found.isEmpty()) {
            throw new ConfigException("invalid value for " + option + ": " + file + " holds no X.509 certificate in"
                    + " PEM (\"-----BEGIN CERTIFICATE-----\")");
        }
        return found.stream().map(X509Certificate.class::cast).toList();
    }

    /** Whether the key signs what the certificate's public key verifies. */
    private static boolean matches(PrivateKey key, X509Certificate certificate) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (algorithm == null) {
            return true; // an algorithm not tried here: the handshake will tell
        }
        try {
            byte[] probe = "mcpd".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
