package dev.mcpd.http;

import dev.mcpd.config.Options;
import dev.mcpd.config.TlsFiles;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.TrustOptions;
import java.time.Instant;
import java.util.Optional;

/**
 * The listener's HTTPS (SPEC §12): {@code --tls-cert}/{@code --tls-key}, HTTP/1.1 and HTTP/2 by ALPN, and with
 * {@code --tls-client-ca} a client certificate required of every sender. Vert.x's own TLS does the work, with a key
 * manager and a trust manager whose contents change when the files do ({@link RotatingKeyManager} says why not
 * {@code updateSSLOptions}): new handshakes see the new files, open connections keep theirs.
 */
public final class ListenerTls implements TlsUse {

    private final TlsFiles files;
    private volatile TlsMaterial.Identity identity;
    private volatile Optional<TlsMaterial.Authorities> clientCa;
    private final RotatingKeyManager keys;
    private final Optional<RotatingTrustManager> trust;

    private ListenerTls(TlsFiles files, TlsMaterial.Identity identity, Optional<TlsMaterial.Authorities> clientCa) {
        this.files = files;
        this.identity = identity;
        this.clientCa = clientCa;
        this.keys = new RotatingKeyManager(identity.keyManagers());
        this.trust = clientCa.map(ca -> new RotatingTrustManager(ca.trustManagers()));
    }

    /** The listener's TLS, read and checked now; empty for plain HTTP. */
    public static Optional<ListenerTls> read(TlsFiles files) {
        if (!files.listenerTls()) {
            return Optional.empty();
        }
        return Optional.of(new ListenerTls(files, identity(files), authorities(files)));
    }

    private static TlsMaterial.Identity identity(TlsFiles files) {
        return TlsMaterial.Identity.read(Options.TLS_CERT.flag(), files.cert().orElseThrow(), files.key().orElseThrow());
    }

    private static Optional<TlsMaterial.Authorities> authorities(TlsFiles files) {
        return files.clientCa().map(ca -> TlsMaterial.Authorities.read(Options.TLS_CLIENT_CA.flag(), ca));
    }

    /** The server options, with HTTPS. */
    HttpServerOptions applyTo(HttpServerOptions options) {
        options.setSsl(true).setUseAlpn(true).setKeyCertOptions(KeyCertOptions.wrap(keys));
        trust.ifPresent(t -> options.setTrustOptions(TrustOptions.wrap(t)).setClientAuth(ClientAuth.REQUIRED));
        return options;
    }

    @Override
    public String name() {
        return "listener";
    }

    @Override
    public Optional<Instant> notAfter() {
        return Optional.of(identity.notAfter());
    }

    @Override
    public synchronized Optional<String> reloadIfChanged() {
        TlsMaterial.Identity newIdentity = identity(files);
        Optional<TlsMaterial.Authorities> newCa = authorities(files);
        boolean identitySame = newIdentity.sameAs(identity);
        boolean caSame = newCa.map(ca -> ca.sameAs(clientCa.orElse(null))).orElse(clientCa.isEmpty());
        if (identitySame && caSame) {
            return Optional.empty();
        }
        if (!identitySame) {
            keys.use(newIdentity.keyManagers());
        }
        if (!caSame) {
            trust.orElseThrow().use(newCa.orElseThrow().trustManagers());
        }
        identity = newIdentity;
        clientCa = newCa;
        return Optional.of("listener: certificate " + newIdentity.leaf().getSubjectX500Principal().getName()
                + " from " + newIdentity.certFile() + ", valid until " + newIdentity.notAfter()
                + newCa.map(ca -> ", client authorities from " + ca.file()).orElse("")
                + ": new connections use it, open ones keep theirs");
    }
}
