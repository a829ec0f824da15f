package dev.mcpd.delivery;

import java.net.URI;

/**
 * One collector the relay delivers to.
 *
 * @param order its place in {@code --upstream} order, 1 for the primary
 * @param url   its base URL; a request's path and query are appended to it
 */
public record Upstream(int order, URI url) {

    /** The URL a stored request goes to: the base URL (without a trailing slash) followed by the request target. */
    public String urlFor(String target) {
        String base = url.toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return base + target;
    }

    /** How metrics and logs name it: the URL without any userinfo. */
    public String label() {
        if (url.getRawUserInfo() == null) {
            return url.toString();
        }
        return url.getScheme() + "://" + url.getHost() + (url.getPort() >= 0 ? ":" + url.getPort() : "")
                + (url.getRawPath() == null ? "" : url.getRawPath());
    }
}
