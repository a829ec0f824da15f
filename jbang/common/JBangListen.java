package dev.mcpd.jbang;

import dev.mcpd.config.ListenAddress;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.http.RolePaths;
import dev.mcpd.http.ServingGate;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.camel.CamelContext;

/** What both roles' JBang configurations share: the listen-address check and the serving gate. */
final class JBangListen {

    private JBangListen() {
    }

    /** The HTTP server is set up from camel.server.* before this runs: it must be where MCPD_LISTEN says. */
    static void check(CamelContext camel, McpdConfig config) {
        String host = camel.getPropertiesComponent().resolveProperty("camel.server.host").orElse("0.0.0.0");
        String port = camel.getPropertiesComponent().resolveProperty("camel.server.port").orElse("8080");
        ListenAddress listen = config.listener().address();
        if (!host.equals(listen.host()) || !port.equals(Integer.toString(listen.port()))) {
            throw new IllegalArgumentException("camel.server.host/port (" + host + ":" + port + ") differ from"
                    + " MCPD_LISTEN (" + listen + "): pass --prop=camel.server.host=HOST"
                    + " --prop=camel.server.port=PORT to camel run, as jbang/run.sh does");
        }
    }

    /** The product's serving gate (405 with Allow; 503 + Retry-After while starting or stopping). */
    static void servingGate(CamelContext context, int port, RolePaths paths) {
        ServingGate.on(context, port, paths, new AtomicBoolean());
    }
}
