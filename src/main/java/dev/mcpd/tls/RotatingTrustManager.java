package dev.mcpd.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The authorities the listener trusts for client certificates ({@code --tls-client-ca}), replaceable under a running
 * server for the reason {@link RotatingKeyManager} gives. Each check, and the list of authorities a handshake asks
 * the sender for, is the current set's; {@link #generation()} counts the changes, so that a connection whose
 * handshake an earlier set checked can be checked again.
 */
public final class RotatingTrustManager extends X509ExtendedTrustManager {

    private volatile X509ExtendedTrustManager current;
    private volatile long generation = -1;

    public RotatingTrustManager(TrustManagerFactory first) {
        use(first);
    }

    public synchronized void use(TrustManagerFactory next) {
        current = Arrays.stream(next.getTrustManagers()).filter(X509ExtendedTrustManager.class::isInstance)
                .map(X509ExtendedTrustManager.class::cast).findFirst()
                .orElseThrow(() -> new IllegalStateException("no X.509 trust manager in " + next.getAlgorithm()));
        generation++;
    }

    /** 0 for the authorities the listener started with, one more for each change since. */
    public long generation() {
        return generation;
    }

    /** Whether the current authorities trust {@code chain} as a client's. */
    public boolean trustsClient(X509Certificate[] chain) {
        try {
            current.checkClientTrusted(chain, chain[0].getPublicKey().getAlgorithm());
            return true;
        } catch (CertificateException | RuntimeException e) {
            return false;
        }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        current.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        current.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        current.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        current.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        current.checkServerTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        current.checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return current.getAcceptedIssuers();
    }
}
