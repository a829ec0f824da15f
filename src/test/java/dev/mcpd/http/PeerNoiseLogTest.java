package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.spi.FilterReply;
import dev.mcpd.testing.CapturedLog;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Vert.x's ERROR lines about a peer's connection that the relay says better itself are dropped — and nothing else:
 * another error of a connection, another logger, another level stay.
 */
class PeerNoiseLogTest {

    private final LoggerContext context = new LoggerContext();
    private final PeerNoiseLog filter = new PeerNoiseLog();

    private FilterReply decide(String logger, Level level, String line, Throwable t) {
        return filter.decide(new LoggingEvent(PeerNoiseLogTest.class.getName(), context.getLogger(logger), level, line,
                t, null));
    }

    @Test
    void aRefusedPrefaceAndAResetByThePeerAreDropped() {
        assertEquals(FilterReply.DENY, decide(PeerNoiseLog.CONNECTIONS, Level.ERROR,
                "First received frame was not SETTINGS. Hex dump for first 5 bytes: 485454502f", null));
        assertEquals(FilterReply.DENY, decide(PeerNoiseLog.CONNECTIONS, Level.ERROR, "Connection reset", null));
        assertEquals(FilterReply.DENY, decide(PeerNoiseLog.CONNECTIONS, Level.ERROR, "Connection reset",
                new IOException("Connection reset by peer")));
    }

    @Test
    void everyOtherLineIsKept() {
        assertEquals(FilterReply.NEUTRAL, decide(PeerNoiseLog.CONNECTIONS, Level.ERROR, "SSLHandshakeException", null));
        assertEquals(FilterReply.NEUTRAL, decide(PeerNoiseLog.CONNECTIONS, Level.WARN, "Connection reset", null));
        assertEquals(FilterReply.NEUTRAL, decide("dev.mcpd.delivery.UpstreamHttp", Level.ERROR, "Connection reset",
                null));
        assertEquals(FilterReply.NEUTRAL, decide(PeerNoiseLog.CONNECTIONS, Level.ERROR, null, null));
    }

    /** The shipped logback.xml puts both filters on standard error: the lines are dropped there, others are not. */
    @Test
    void standardErrorAsShippedDropsTheNoiseAndKeepsTheRest() {
        LoggerContext shipped = (LoggerContext) LoggerFactory.getILoggerFactory();
        Appender<ILoggingEvent> stderr = CapturedLog.standardError();
        assertEquals(FilterReply.DENY, stderr.getFilterChainDecision(new LoggingEvent("x",
                shipped.getLogger(PeerNoiseLog.CONNECTIONS), Level.ERROR, "Connection reset", null, null)));
        assertEquals(FilterReply.DENY, stderr.getFilterChainDecision(new LoggingEvent("x",
                shipped.getLogger(StartFailureLog.CAMEL_CONTEXT), Level.ERROR,
                "Error starting CamelContext (camel-1) due to exception thrown: bind", null, null)));
        assertEquals(FilterReply.NEUTRAL, stderr.getFilterChainDecision(new LoggingEvent("x",
                shipped.getLogger(PeerNoiseLog.CONNECTIONS), Level.ERROR, "SSLHandshakeException", null, null)));
    }

    @Test
    void theStartFailureFilterDropsCamelsStackTraceAlone() {
        StartFailureLog start = new StartFailureLog();
        assertEquals(FilterReply.DENY, start.decide(new LoggingEvent("x",
                context.getLogger(StartFailureLog.CAMEL_CONTEXT), Level.ERROR,
                "Error starting CamelContext (camel-1) due to exception thrown: bind", new IOException("bind"), null)));
        assertEquals(FilterReply.NEUTRAL, start.decide(new LoggingEvent("x",
                context.getLogger(StartFailureLog.CAMEL_CONTEXT), Level.INFO, "Apache Camel 4.18.0 started", null,
                null)));
    }
}
