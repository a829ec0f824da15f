package dev.mcpd.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Keeps Vert.x's "unhandled exception" ERROR lines about a peer's connection out of the log where the relay says the
 * same itself, better: an HTTP/1.1 server or proxy that answered the HTTP/2 preface (the relay logs one WARN naming the
 * upstream, and speaks HTTP/1.1 to it from then on), and a connection the peer reset (a sender or upstream that went
 * away: the request it carried failed, and that failure is reported where it matters — the sender got no answer to
 * wait for, the entry stays in the spool and the upstream's failure is logged with its name). Every other error of a
 * connection is still logged. Named on the appender in {@code logback.xml} (see {@link StartFailureLog} for why not
 * as a turbo filter).
 */
public final class PeerNoiseLog extends Filter<ILoggingEvent> {

    static final String CONNECTIONS = "io.vertx.core.net.impl.ConnectionBase";
    /** Netty's words when a peer's first bytes were not HTTP/2's SETTINGS (an HTTP/1.1 status line, say). */
    static final String PREFACE_REFUSED = "First received frame was not SETTINGS";
    /** The JDK's words for a TCP reset. */
    static final String RESET_BY_PEER = "Connection reset";

    @Override
    public FilterReply decide(ILoggingEvent event) {
        if (event.getLevel() != Level.ERROR || !CONNECTIONS.equals(event.getLoggerName())) {
            return FilterReply.NEUTRAL;
        }
        // Vert.x logs the exception's message alone (the exception itself only at DEBUG).
        IThrowableProxy thrown = event.getThrowableProxy();
        String line = thrown != null ? thrown.getMessage() : event.getMessage();
        return line != null && (line.startsWith(PREFACE_REFUSED) || line.startsWith(RESET_BY_PEER))
                ? FilterReply.DENY : FilterReply.NEUTRAL;
    }
}
