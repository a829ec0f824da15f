package dev.mcpd.http;

import dev.mcpd.config.Options;
import dev.mcpd.config.TlsFiles;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.SSLOptions;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listener's HTTPS (SPEC §12): {@code --tls-cert}/{@code --tls-key}, HTTP/1.1 and HTTP/2 by ALPN, and with
 * {@code --tls-client-ca} a client certificate required of every sender. Vert.x's own TLS does the work; a change of
 * the files is handed to the running server with {@link HttpServer#updateSSLOptions}, which new handshakes use.
 */
public final class ListenerTls implements TlsUse {

    private static final Logger LOG = LoggerFactory.getLogger(ListenerTls.class);

    private final TlsFiles files;
    private volatile TlsMaterial.Identity identity;
    private volatile Optional<TlsMaterial.Authorities> clientCa;
    private final List<HttpServer> servers = new CopyOnWriteArrayList<>();

    private ListenerTls(TlsFiles files, TlsMaterial.Identity identity, Optional<TlsMaterial.Authorities> clientCa) {
        this.files = files;
        this.identity = identity;
        this.clientCa = clientCa;
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
        options.setSsl(true).setUseAlpn(true).setKeyCertOptions(identity.options());
        clientCa.ifPresent(ca -> options.setTrustOptions(ca.options()).setClientAuth(ClientAuth.REQUIRED));
        return options;
    }

    /** A server made with {@link #applyTo}'s options: it is given new files when they change. */
    void serving(HttpServer server) {
        servers.add(server);
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
    public Optional<String> reloadIfChanged() {
        TlsMaterial.Identity newIdentity = identity(files);
        Optional<TlsMaterial.Authorities> newCa = authorities(files);
        boolean caSame = newCa.map(ca -> ca.sameAs(clientCa.orElse(null))).orElse(clientCa.isEmpty());
        if (newIdentity.sameAs(identity) && caSame) {
            return Optional.empty();
        }
        SSLOptions ssl = new SSLOptions().setKeyCertOptions(newIdentity.options()).setUseAlpn(true);
        newCa.ifPresent(ca -> ssl.setTrustOptions(ca.options()));
        for (HttpServer server : servers) {
            try {
                server.updateSSLOptions(ssl, true).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("the listener could not take the new TLS files ({}); it keeps the ones it has",
                        RootCause.oneLine(e));
                return Optional.empty();
            }
        }
        identity = newIdentity;
        clientCa = newCa;
        return Optional.of("listener: certificate " + newIdentity.leaf().getSubjectX500Principal().getName()
                + " from " + newIdentity.certFile() + ", valid until " + newIdentity.notAfter()
                + newCa.map(ca -> ", client authorities from " + ca.file()).orElse("")
                + ": new connections use it, open ones keep theirs");
    }
}
