package dev.mcpd.jbang;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.ingest.MethodNotAllowed;
import org.apache.camel.CamelContext;
import org.apache.camel.StartupListener;

/** What both roles' JBang configurations share: the listen-address check and the 405 answer. */
final class JBangListen {

    private JBangListen() {
    }

    /** The HTTP server is set up from camel.server.* before this runs: it must be where MCPD_LISTEN says. */
    static void check(CamelContext camel, McpdConfig config) {
        String host = camel.getPropertiesComponent().resolveProperty("camel.server.host").orElse("0.0.0.0");
        String port = camel.getPropertiesComponent().resolveProperty("camel.server.port").orElse("8080");
        if (!host.equals(config.listen().host()) || !port.equals(Integer.toString(config.listen().port()))) {
            throw new IllegalArgumentException("camel.server.host/port (" + host + ":" + port + ") differ from"
                    + " MCPD_LISTEN (" + config.listen() + "): pass --prop=camel.server.host=HOST"
                    + " --prop=camel.server.port=PORT to camel run, as jbang/run.sh does");
        }
    }

    /** The product's 405 answer, added once Camel (and so its HTTP router) has started. */
    static StartupListener methodNotAllowed(int port) {
        return new StartupListener() {
            @Override
            public void onCamelContextStarted(CamelContext context, boolean alreadyStarted) {
            }

            @Override
            public void onCamelContextFullyStarted(CamelContext context, boolean alreadyStarted) {
                MethodNotAllowed.answerOn(context, port);
            }
        };
    }
}
