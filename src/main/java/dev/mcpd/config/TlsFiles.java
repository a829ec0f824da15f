package dev.mcpd.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The TLS PEM files, as named: the listener's certificate and key ({@code --tls-cert}, {@code --tls-key}),
 * the authorities whose client certificates it requires ({@code --tls-client-ca}), the authorities that sign the
 * upstreams' certificates ({@code --upstream-ca}), and the certificate and key the relay presents to them
 * ({@code --upstream-client-cert}, {@code --upstream-client-key}). Checked here: what goes together is given together,
 * and each file is there to be read. What is inside is read, and checked, when the listener or the clients start.
 */
public record TlsFiles(Optional<Path> cert, Optional<Path> key, Optional<Path> clientCa, Optional<Path> upstreamCa,
                       Optional<Path> upstreamClientCert, Optional<Path> upstreamClientKey) {

    public TlsFiles {
        Objects.requireNonNull(cert, "cert");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(clientCa, "clientCa");
        Objects.requireNonNull(upstreamCa, "upstreamCa");
        Objects.requireNonNull(upstreamClientCert, "upstreamClientCert");
        Objects.requireNonNull(upstreamClientKey, "upstreamClientKey");
        if (cert.isPresent() != key.isPresent()) {
            throw new ConfigException(Options.TLS_CERT.flag() + " and " + Options.TLS_KEY.flag()
                    + " go together: give both (HTTPS) or neither (plain HTTP)");
        }
        if (clientCa.isPresent() && cert.isEmpty()) {
            throw new ConfigException(Options.TLS_CLIENT_CA.flag() + " asks senders for certificates over TLS: give "
                    + Options.TLS_CERT.flag() + " and " + Options.TLS_KEY.flag() + " too");
        }
        if (upstreamClientCert.isPresent() != upstreamClientKey.isPresent()) {
            throw new ConfigException(Options.UPSTREAM_CLIENT_CERT.flag() + " and "
                    + Options.UPSTREAM_CLIENT_KEY.flag() + " go together: give both or neither");
        }
    }

    /** No TLS anywhere: plain HTTP, and the JDK's trust store for {@code https://} upstreams. */
    public static TlsFiles none() {
        return new TlsFiles(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty());
    }

    /** Whether the listener speaks HTTPS. */
    public boolean listenerTls() {
        return cert.isPresent();
    }

    /** Every file named, for the reloader to watch. */
    public List<Path> all() {
        List<Path> files = new ArrayList<>();
        for (Optional<Path> file : List.of(cert, key, clientCa, upstreamCa, upstreamClientCert, upstreamClientKey)) {
            file.ifPresent(files::add);
        }
        return files;
    }

    /**
     * The {@code tls} line of {@code mcpd config}: the files, and of each certificate presented its subject and when
     * it expires — never key material.
     */
    String describe() {
        String listener = cert.map(c -> "HTTPS with " + c + certificate(c) + " (key " + key.orElseThrow() + ")"
                + clientCa.map(ca -> ", client certificates signed by " + ca + " required").orElse(""))
                .orElse("plain HTTP");
        return "listener " + listener + "; https:// upstreams trusted by "
                + upstreamCa.map(Path::toString).orElse("the JDK's trust store")
                + upstreamClientCert.map(c -> ", client certificate " + c + certificate(c) + " (key "
                        + upstreamClientKey.orElseThrow()
                        + ")").orElse("");
    }

    /** " [subject, valid until …]" of the file's first certificate; what start-up would refuse, said as such. */
    private static String certificate(Path file) {
        try (var in = Files.newInputStream(file)) {
            var first = (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(in);
            return " [" + first.getSubjectX500Principal().getName() + ", valid until "
                    + first.getNotAfter().toInstant() + "]";
        } catch (IOException | CertificateException | ClassCastException e) {
            return " [no X.509 certificate in PEM: start-up refuses it]";
        }
    }

    /** A file an option names: it must be a readable regular file. */
    static Path readableFile(String text) {
        if (text.isBlank()) {
            throw new IllegalArgumentException("the value is empty: name a PEM file");
        }
        Path file = Path.of(text.strip());
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("\"" + text + "\" is not a file");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException("\"" + text + "\" cannot be read by this user");
        }
        return file;
    }
}
