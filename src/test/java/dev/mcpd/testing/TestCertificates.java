package dev.mcpd.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made for a test by the real {@code openssl}, in the test's folder (never committed): an authority,
 * and certificates it signs for a server ({@code 127.0.0.1}, {@code localhost}) or a client.
 */
public final class TestCertificates {

    /** A certificate and its key, as PEM files. */
    public record Pair(Path cert, Path key) {
    }

    private final Path dir;
    private final String name;
    public final Path caCert;
    private final Path caKey;

    private TestCertificates(Path dir, String name) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.name = name;
        this.caCert = dir.resolve(name + "-ca.pem");
        this.caKey = dir.resolve(name + "-ca.key");
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", caKey.toString(), "-out", caCert.toString(), "-days", "2", "-subj", "/CN=" + name + " test CA");
    }

    /** A new authority named {@code name}, its files in {@code dir}. */
    public static TestCertificates authority(Path dir, String name) throws IOException {
        return new TestCertificates(dir, name);
    }

    /** A server certificate for 127.0.0.1 and localhost, signed by this authority. */
    public Pair server(String file, String commonName) throws IOException {
        return signed(file, commonName, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    }

    /**
     * A server certificate (as {@link #server}) that is a client's too, extended key usages serverAuth and clientAuth:
     * what cert-manager makes with {@code usages: [server auth, client auth]}.
     */
    public Pair serverAndClient(String file, String commonName) throws IOException {
        return signed(file, commonName,
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n");
    }

    /** A client certificate, signed by this authority. */
    public Pair client(String file, String commonName) throws IOException {
        return signed(file, commonName, "extendedKeyUsage=clientAuth\n");
    }

    private Pair signed(String file, String commonName, String extensions) throws IOException {
        Path key = dir.resolve(file + ".key");
        Path request = dir.resolve(file + ".csr");
        Path cert = dir.resolve(file + ".pem");
        Path ext = dir.resolve(file + ".ext");
        Files.writeString(ext, extensions);
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                key.toString(), "-out", request.toString(), "-subj", "/CN=" + commonName);
        openssl("x509", "-req", "-in", request.toString(), "-CA", caCert.toString(), "-CAkey", caKey.toString(),
                "-CAcreateserial", "-out", cert.toString(), "-days", "1", "-extfile", ext.toString());
        return new Pair(cert, key);
    }

    /** Whether openssl runs here (the TLS tests need it; .ci/run installs it). */
    public static boolean available() {
        try {
            return new ProcessBuilder("openssl", "version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private static void openssl(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " failed:\n" + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
