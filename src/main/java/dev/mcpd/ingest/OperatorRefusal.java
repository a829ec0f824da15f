package dev.mcpd.ingest;

import dev.mcpd.http.RouteRefusal;

/**
 * Thrown by an operator's route at {@code direct:mcpd-before-spool} to refuse a request: the sender gets 403 with
 * the message as its one-line reason, and nothing is spooled. In YAML:
 * {@code - throwException: {exceptionType: dev.mcpd.ingest.OperatorRefusal, message: "debug data is not relayed"}}.
 */
public class OperatorRefusal extends RouteRefusal {
    public OperatorRefusal(String message) {
        super(message);
    }
}
