package dev.mcpd.upstream;

import dev.mcpd.config.KafkaAddress;
import dev.mcpd.wire.RequestTarget;
import dev.mcpd.wire.RequestTarget.InvalidTarget;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.Optional;

/**
 * One upstream the relay delivers to: a collector over HTTP, or a Kafka topic.
 *
 * @param order its place in {@code --upstream} order, 1 for the primary
 * @param url   its base URL, a request's path and query going after its path; or its Kafka address
 */
public record Upstream(int order, URI url) {

    /** Its topic and brokers, when it is a Kafka topic ({@code kafka://}, {@code kafkas://}) rather than HTTP. */
    public Optional<KafkaAddress> kafka() {
        return KafkaAddress.isKafka(url) ? Optional.of(KafkaAddress.parse(url)) : Optional.empty();
    }

    /** Whether it is a Kafka topic: each entry goes to it as one record, never in a batch or a merge. */
    public boolean isKafka() {
        return KafkaAddress.isKafka(url);
    }

    /**
     * The URL a stored request goes to: this upstream's scheme, host and port, its path (without a trailing slash),
     * then the request's path and query. The target is parsed again as {@link RequestTarget} (an entry an older relay
     * spooled included), and the result is checked to name this upstream's scheme, host and port and to stay under its
     * path: whatever a sender wrote, it cannot choose where delivery goes.
     *
     * @throws InvalidTarget when the stored target can never be sent anywhere (its entry goes to dead/)
     */
    public String urlFor(String target) throws InvalidTarget {
        return built(target).toString();
    }

    /** As {@link #urlFor}, only its path and query: what the request line names. */
    public String targetFor(String target) throws InvalidTarget {
        URI built = built(target);
        return built.getRawQuery() == null ? built.getRawPath() : built.getRawPath() + "?" + built.getRawQuery();
    }

    /** Whether requests to it go over TLS ({@code https://}, {@code kafkas://}). */
    public boolean tls() {
        return "https".equalsIgnoreCase(url.getScheme()) || "kafkas".equalsIgnoreCase(url.getScheme());
    }

    public String host() {
        return url.getHost();
    }

    /** Its port, the scheme's default when the URL names none. */
    public int port() {
        return url.getPort() >= 0 ? url.getPort() : tls() ? 443 : 80;
    }

    private URI built(String target) throws InvalidTarget {
        RequestTarget parsed = RequestTarget.parse(target);
        String basePath = url.getRawPath() == null ? "" : url.getRawPath();
        if (basePath.endsWith("/")) {
            basePath = basePath.substring(0, basePath.length() - 1);
        }
        URI built;
        try {
            built = new URI(url.getScheme() + "://" + url.getRawAuthority() + basePath + parsed.text());
        } catch (URISyntaxException e) {
            throw new InvalidTarget("the request target does not make a URL with the upstream's: " + e.getReason());
        }
        if (!url.getScheme().equalsIgnoreCase(built.getScheme()) || !Objects.equals(url.getHost(), built.getHost())
                || url.getPort() != built.getPort() || built.getRawUserInfo() != null
                || !built.getRawPath().startsWith(basePath + "/")) {
            throw new InvalidTarget("the request target would leave the upstream's scheme, host, port or path");
        }
        return built;
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
