package dev.mcpd.config;

import java.net.URI;
import java.util.Locale;

/**
 * What an upstream URL may be ({@code --upstream}: HTTP, HTTPS or a Kafka topic) and an address to check one at
 * ({@code --upstream-probe}: HTTP or HTTPS), with one-line reasons that never print a password.
 */
final class UpstreamUrls {

    private UpstreamUrls() {
    }

    static URI parseUpstream(String text) {
        return checkUpstream(OptionValues.parseUri(text.strip(), "is not an upstream URL"));
    }

    static URI checkUpstream(URI upstream) {
        if (KafkaAddress.isKafka(upstream)) {
            KafkaAddress.parse(upstream); // its own one-line reasons
            return upstream;
        }
        if (!isHttp(upstream)) {
            throw new IllegalArgumentException("\"" + OptionValues.redact(upstream.toString())
                    + "\" is not an upstream URL: use http://HOST:PORT, https://HOST:PORT or kafka://HOST:PORT/TOPIC");
        }
        return checkHttpUpstream(upstream);
    }

    /** An address to check an upstream at ({@code --upstream-probe}): HTTP only. */
    static URI parseProbeAddress(String text) {
        URI address = OptionValues.parseUri(text.strip(), "is not an upstream URL");
        if (!isHttp(address)) {
            throw new IllegalArgumentException("\"" + OptionValues.redact(address.toString())
                    + "\" is not an upstream URL: use http://HOST:PORT or https://HOST:PORT");
        }
        return checkHttpUpstream(address);
    }

    private static boolean isHttp(URI upstream) {
        String scheme = upstream.getScheme() == null ? "" : upstream.getScheme().toLowerCase(Locale.ROOT);
        return upstream.isAbsolute() && (scheme.equals("http") || scheme.equals("https"));
    }

    private static URI checkHttpUpstream(URI upstream) {
        if (upstream.getHost() == null) {
            // java.net.URI finds no host in names with '_' (common for Compose services); nor would the HTTP client.
            throw new IllegalArgumentException("\"" + OptionValues.redact(upstream.toString())
                    + "\" is not an upstream URL: it names no host (host names may use letters, digits, '-' and '.')");
        }
        if (upstream.getRawUserInfo() != null) {
            // The HTTP client refuses such URLs, and a key in a URL ends up in `ps` and shell history.
            throw new IllegalArgumentException("\"" + OptionValues.redact(upstream.toString())
                    + "\" carries a user or password: give the relay's key with --upstream-key instead");
        }
        if (upstream.getRawQuery() != null || upstream.getRawFragment() != null) {
            // A query would be shown in metric labels, /relay/status and /readyz (a token in it would leak there),
            // and a request's own path and query go after the upstream's path: there is no place for a second one.
            throw new IllegalArgumentException("\"" + OptionValues.redact(upstream.toString())
                    + "\" carries a query or fragment:"
                    + " an upstream URL is scheme, host, port and path; give the relay's key with --upstream-key");
        }
        return upstream;
    }

}
