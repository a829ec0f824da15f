package dev.mcpd.upstream;

import dev.mcpd.wire.Capabilities;
import java.util.Locale;

/**
 * What an upstream's readiness probe showed it speaks: whether HTTP/2 can carry deliveries to it, and how, and whether
 * it takes relay batches.
 *
 * @param http2   how the relay reaches it over HTTP/2, if at all
 * @param batches it is an mcpd collector that takes relay batches ({@code relay-batch/1})
 */
public record UpstreamOffer(Http2 http2, boolean batches) {

    /** The header in which an mcpd collector names what it takes, space-separated: {@code h2c}, … */
    public static final String CAPABILITIES_HEADER = Capabilities.HEADER;

    public static final UpstreamOffer UNKNOWN = new UpstreamOffer(Http2.NONE, false);

    public enum Http2 {
        /** HTTP/1.1 only, or not known yet: keep-alive HTTP/1.1 connections, as many as the window needs. */
        NONE,
        /** It switched to HTTP/2 when asked by an {@code Upgrade: h2c} header: its connections are upgraded too. */
        UPGRADE,
        /** It speaks HTTP/2 from the first byte: ALPN agreed on h2 ({@code https://}), or it said {@code h2c}. */
        PRIOR_KNOWLEDGE;

        /** As a log line names it: {@code none}, {@code upgrade}, {@code prior_knowledge} — {@code alpn} over TLS. */
        public String describe(boolean tls) {
            return this == PRIOR_KNOWLEDGE && tls ? "alpn" : name().toLowerCase(Locale.ROOT);
        }
    }
}
