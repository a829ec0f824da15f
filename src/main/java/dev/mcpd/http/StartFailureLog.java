package dev.mcpd.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Keeps Camel's "Error starting CamelContext" (an ERROR and a stack trace of some 35 lines) out of the log: the
 * reason comes out once, as the one line {@code mcpd: cannot start the relay on …: …} that {@link RoleHost} prints.
 * Named on the appender in {@code logback.xml} — an appender's filter sees only events that passed their logger's
 * level; a turbo filter is asked on every level check, and Camel and Netty ask several per request (6 % of the event
 * loops' time at saturation).
 */
public final class StartFailureLog extends Filter<ILoggingEvent> {

    static final String CAMEL_CONTEXT = "org.apache.camel.impl.engine.AbstractCamelContext";

    @Override
    public FilterReply decide(ILoggingEvent event) {
        String format = event.getMessage();
        if (event.getLevel() == Level.ERROR && CAMEL_CONTEXT.equals(event.getLoggerName()) && format != null
                && format.startsWith("Error starting CamelContext")) {
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }
}
