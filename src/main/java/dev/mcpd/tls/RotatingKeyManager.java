package dev.mcpd.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The listener's certificate and key, replaceable under a running server: each handshake takes the identity current
 * when it chose its alias, and the alias names that identity, so a change in the middle of a handshake cannot pair
 * one identity's chain with another's key.
 *
 * <p>Why not Vert.x's {@code HttpServer.updateSSLOptions}: in 4.5.24–4.5.27 it installs the new SSL context as a
 * future that completes on a worker thread, and a connection accepted meanwhile fails with a
 * {@code NullPointerException} (a handshake refused, a stack trace in the log) — {@code TlsTest}'s handshakes during
 * a change met it at once. The server's context is built once with this key manager and never replaced.
 */
public final class RotatingKeyManager extends X509ExtendedKeyManager {

    private record Generation(long number, X509ExtendedKeyManager keys) {

        String alias(String inner) {
            return inner == null ? null : number + "/" + inner;
        }
    }

    private volatile Generation current;
    private volatile Generation previous;

    public RotatingKeyManager(KeyManagerFactory first) {
        current = new Generation(0, extended(first));
    }

    /** New handshakes present {@code next}; one that already chose the previous identity finishes with it. */
    public synchronized void use(KeyManagerFactory next) {
        Generation now = current;
        previous = now;
        current = new Generation(now.number() + 1, extended(next));
    }

    private static X509ExtendedKeyManager extended(KeyManagerFactory factory) {
        return Arrays.stream(factory.getKeyManagers()).filter(X509ExtendedKeyManager.class::isInstance)
                .map(X509ExtendedKeyManager.class::cast).findFirst()
                .orElseThrow(() -> new IllegalStateException("no X.509 key manager in " + factory.getAlgorithm()));
    }

    private Generation of(String alias) {
        if (alias == null) {
            return null;
        }
        int slash = alias.indexOf('/');
        if (slash < 0) {
            return null;
        }
        String number = alias.substring(0, slash);
        Generation now = current;
        if (number.equals(Long.toString(now.number()))) {
            return now;
        }
        Generation before = previous;
        return before != null && number.equals(Long.toString(before.number())) ? before : null;
    }

    private static String inner(String alias) {
        return alias.substring(alias.indexOf('/') + 1);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        Generation now = current;
        return now.alias(now.keys().chooseEngineServerAlias(keyType, issuers, engine));
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        Generation now = current;
        return now.alias(now.keys().chooseServerAlias(keyType, issuers, socket));
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        Generation now = current;
        String[] aliases = now.keys().getServerAliases(keyType, issuers);
        return aliases == null ? null : Arrays.stream(aliases).map(now::alias).toArray(String[]::new);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        Generation generation = of(alias);
        return generation == null ? null : generation.keys().getCertificateChain(inner(alias));
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        Generation generation = of(alias);
        return generation == null ? null : generation.keys().getPrivateKey(inner(alias));
    }

    /** The listener presents no client certificate. */
    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return null;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return null;
    }
}
