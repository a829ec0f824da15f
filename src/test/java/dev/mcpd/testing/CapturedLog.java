package dev.mcpd.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Every log event of this JVM while it is open (logback's own list appender on the root logger), through the filters
 * {@code logback.xml} puts on standard error — taken from that appender, so they are the ones shipped: what an operator
 * would read.
 */
public final class CapturedLog implements AutoCloseable {

    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    public CapturedLog() {
        standardError().getCopyOfAttachedFiltersList().forEach(appender::addFilter);
        appender.start();
        root.addAppender(appender);
    }

    /** The appender {@code logback.xml} writes standard error with. */
    public static Appender<ILoggingEvent> standardError() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Appender<ILoggingEvent> stderr = root.getAppender("STDERR");
        if (stderr == null) {
            throw new IllegalStateException("logback.xml has no STDERR appender on the root logger");
        }
        return stderr;
    }

    /** The events so far, of this logger (or one below it) and at least this level. */
    public List<ILoggingEvent> events(String loggerPrefix, Level atLeast) {
        synchronized (appender) { // the lock AppenderBase.doAppend takes
            return appender.list.stream().filter(e -> e.getLoggerName().startsWith(loggerPrefix))
                    .filter(e -> e.getLevel().isGreaterOrEqual(atLeast)).toList();
        }
    }

    /** Events at ERROR from any logger. */
    public List<ILoggingEvent> errors() {
        return events("", Level.ERROR);
    }

    @Override
    public void close() {
        root.detachAppender(appender);
        appender.stop();
    }
}
