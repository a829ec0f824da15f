package dev.mcpd.delivery;

import dev.mcpd.config.Options;
import dev.mcpd.config.TlsFiles;
import dev.mcpd.tls.TlsMaterial;
import dev.mcpd.tls.TlsUse;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.net.SSLOptions;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The relay's TLS to its {@code https://} upstreams: the authorities it trusts ({@code --upstream-ca},
 * else the JDK's trust store) and the certificate it presents when asked ({@code --upstream-client-cert}/{@code -key}).
 * Delivery's Vert.x clients (the health checks' among them) take these files, and new ones when they change.
 */
public final class UpstreamTls implements TlsUse {

    private final TlsFiles files;
    private volatile Optional<TlsMaterial.Authorities> authorities;
    private volatile Optional<TlsMaterial.Identity> identity;
    private final List<Consumer<SSLOptions>> vertxClients = new CopyOnWriteArrayList<>();

    private UpstreamTls(TlsFiles files) {
        this.files = files;
        this.authorities = authorities(files);
        this.identity = identity(files);
    }

    /** Read and checked now: a bad file is a {@link dev.mcpd.config.ConfigException}. */
    public static UpstreamTls read(TlsFiles files) {
        return new UpstreamTls(files);
    }

    private static Optional<TlsMaterial.Authorities> authorities(TlsFiles files) {
        return files.upstreamCa().map(ca -> TlsMaterial.Authorities.read(Options.UPSTREAM_CA.flag(), ca));
    }

    private static Optional<TlsMaterial.Identity> identity(TlsFiles files) {
        return files.upstreamClientCert().map(cert -> TlsMaterial.Identity.read(Options.UPSTREAM_CLIENT_CERT.flag(),
                cert, files.upstreamClientKey().orElseThrow()));
    }

    /** Delivery's client options, with the files' trust and identity (nothing set: the JDK's trust store). */
    <T extends HttpClientOptions> T applyTo(T options) {
        authorities.ifPresent(ca -> options.setTrustOptions(ca.options()));
        identity.ifPresent(id -> options.setKeyCertOptions(id.options()));
        return options;
    }

    /** A Vert.x client made with {@link #applyTo}: it is given the new files when they change. */
    void onChange(Consumer<SSLOptions> client) {
        vertxClients.add(client);
    }

    @Override
    public String name() {
        return "upstream";
    }

    @Override
    public Optional<Instant> notAfter() {
        return identity.map(TlsMaterial.Identity::notAfter);
    }

    @Override
    public Optional<String> reloadIfChanged() {
        Optional<TlsMaterial.Authorities> newCa = authorities(files);
        Optional<TlsMaterial.Identity> newIdentity = identity(files);
        boolean caSame = newCa.map(ca -> ca.sameAs(authorities.orElse(null))).orElse(authorities.isEmpty());
        boolean identitySame = newIdentity.map(id -> id.sameAs(identity.orElse(null))).orElse(identity.isEmpty());
        if (caSame && identitySame) {
            return Optional.empty();
        }
        authorities = newCa;
        identity = newIdentity;
        SSLOptions ssl = new SSLOptions();
        newCa.ifPresent(ca -> ssl.setTrustOptions(ca.options()));
        newIdentity.ifPresent(id -> ssl.setKeyCertOptions(id.options()));
        vertxClients.forEach(client -> client.accept(ssl));
        return Optional.of("upstream: " + newCa.map(ca -> "authorities from " + ca.file()).orElse("JDK trust store")
                + newIdentity.map(id -> ", client certificate " + id.leaf().getSubjectX500Principal().getName()
                        + " valid until " + id.notAfter()).orElse("") + ": new connections use them");
    }
}
