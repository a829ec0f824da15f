package dev.mcpd.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.TlsFiles;
import dev.mcpd.testing.TestCertificates;
import io.vertx.core.net.SSLOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS file rotation on the upstream side: changed files reach delivery's clients (the health checks' among them). */
class UpstreamTlsTest {

    @TempDir
    Path tmp;

    @Test
    void changedFilesReachEveryClientAndUnusableOnesLeaveTheOldInUse() throws Exception {
        assumeTrue(TestCertificates.available(), "openssl is not on the PATH (.ci/run installs it)");
        TestCertificates ca = TestCertificates.authority(tmp.resolve("pki"), "upstream");
        TestCertificates.Pair first = ca.client("first", "relay-first");
        TestCertificates.Pair second = ca.client("second", "relay-second");
        Path cert = Files.copy(first.cert(), tmp.resolve("client.pem"));
        Path key = Files.copy(first.key(), tmp.resolve("client.key"));
        UpstreamTls tls = UpstreamTls.read(new TlsFiles(Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.of(ca.caCert), Optional.of(cert), Optional.of(key)));
        List<SSLOptions> vertxUpdates = new ArrayList<>();
        tls.onChange(vertxUpdates::add);
        Instant firstExpiry = tls.notAfter().orElseThrow();

        assertEquals(Optional.empty(), tls.reloadIfChanged(), "nothing changed");
        assertTrue(vertxUpdates.isEmpty());

        Files.copy(second.key(), key, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(second.cert(), cert, StandardCopyOption.REPLACE_EXISTING);
        String change = tls.reloadIfChanged().orElseThrow();
        assertTrue(change.contains("CN=relay-second"), change);
        assertEquals(1, vertxUpdates.size());
        assertTrue(vertxUpdates.get(0).getKeyCertOptions() != null && vertxUpdates.get(0).getTrustOptions() != null);

        Files.writeString(cert, "-----BEGIN CERTIFICATE-----\nMIIB\n");
        assertThrows(ConfigException.class, tls::reloadIfChanged);
        assertEquals(1, vertxUpdates.size(), "half a file reaches no client");
        assertTrue(tls.notAfter().isPresent() && !tls.notAfter().get().isBefore(firstExpiry.minusSeconds(86_400)));
    }
}
