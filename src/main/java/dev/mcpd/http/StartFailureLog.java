package dev.mcpd.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Keeps Camel's "Error starting CamelContext" (an ERROR and a stack trace of some 35 lines) out of the log: the
 * reason comes out once, as the one line {@code mcpd: cannot start the relay on …: …} that {@link RoleHost} prints.
 * Named in {@code logback.xml}.
 */
public final class StartFailureLog extends TurboFilter {

    static final String CAMEL_CONTEXT = "org.apache.camel.impl.engine.AbstractCamelContext";

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params,
                              Throwable t) {
        if (level == Level.ERROR && CAMEL_CONTEXT.equals(logger.getName()) && format != null
                && format.startsWith("Error starting CamelContext")) {
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }
}
