package dev.mcpd.http;

/**
 * A refusal thrown by a route (an operator's, at an extension point): the sender gets 403 with the message as its
 * one-line reason, and nothing is kept. Operators of the relay throw its subclass {@code OperatorRefusal}.
 */
public class RouteRefusal extends RuntimeException {
    public RouteRefusal(String message) {
        super(message, null, false, false);
    }
}
