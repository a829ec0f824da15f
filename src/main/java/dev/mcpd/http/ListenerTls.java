package dev.mcpd.http;

import dev.mcpd.config.Options;
import dev.mcpd.config.TlsFiles;
import dev.mcpd.logs.SenderText;
import dev.mcpd.tls.RotatingKeyManager;
import dev.mcpd.tls.RotatingTrustManager;
import dev.mcpd.tls.TlsMaterial;
import dev.mcpd.tls.TlsUse;
import io.vertx.core.Handler;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.TrustOptions;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The listener's HTTPS: {@code --tls-cert}/{@code --tls-key}, HTTP/1.1 and HTTP/2 by ALPN, and with
 * {@code --tls-client-ca} a client certificate required of every sender. Vert.x's own TLS does the work, with a key
 * manager and a trust manager whose contents change when the files do ({@link RotatingKeyManager} says why not
 * {@code updateSSLOptions}): new handshakes see the new files, open connections keep the certificate they were
 * shown. An authority taken out of {@code --tls-client-ca} is not left to connections and resumed TLS sessions a
 * handshake admitted before: {@link #admitting} checks their sender's certificate again, once per change.
 */
public final class ListenerTls implements TlsUse {

    /** The session value that says which authorities' generation last admitted the session's sender. */
    private static final String CHECKED_AT = "dev.mcpd.client-authorities";

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

    /**
     * {@code next}, for the requests of connections whose client certificate the current authorities trust. After a
     * change of {@code --tls-client-ca}, a connection (or a resumed TLS session) admitted by the earlier authorities
     * is checked again at its next request, once; one no longer trusted is closed without an answer, as its handshake
     * would now fail, and said in one line.
     */
    Handler<HttpServerRequest> admitting(Handler<HttpServerRequest> next, FrontDoor.RefusalLog log) {
        if (trust.isEmpty() || next == null) {
            return next;
        }
        RotatingTrustManager authorities = trust.get();
        return request -> {
            long generation = authorities.generation();
            SSLSession session = generation == 0 ? null : request.connection().sslSession();
            if (session == null || Long.valueOf(generation).equals(session.getValue(CHECKED_AT))) {
                next.handle(request);
                return;
            }
            X509Certificate[] chain = peerChain(session);
            if (chain.length > 0 && authorities.trustsClient(chain)) {
                session.putValue(CHECKED_AT, generation);
                next.handle(request);
                return;
            }
            log.refused("UNTRUSTED_CLIENT", "refused reason=\"the sender's certificate is not signed by the authorities"
                    + " now in --tls-client-ca\" subject=\"" + (chain.length == 0 ? "-" : SenderText.quote(chain[0]
                    .getSubjectX500Principal().getName())) + "\" remote="
                    + (request.remoteAddress() == null ? "-" : request.remoteAddress().host()) + ": connection closed");
            request.connection().close();
        };
    }

    private static X509Certificate[] peerChain(SSLSession session) {
        try {
            return Arrays.stream(session.getPeerCertificates()).filter(X509Certificate.class::isInstance)
                    .map(X509Certificate.class::cast).toArray(X509Certificate[]::new);
        } catch (SSLPeerUnverifiedException e) {
            return new X509Certificate[0];
        }
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
