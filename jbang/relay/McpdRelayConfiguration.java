package dev.mcpd.jbang;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.http.RoleHost;
import dev.mcpd.relay.RelayApplication;
import dev.mcpd.relay.RelayBeans;
import org.apache.camel.CamelConfiguration;
import org.apache.camel.CamelContext;
import org.apache.camel.support.service.ServiceSupport;

/**
 * The relay under Camel JBang ({@code camel run}): the same beans as {@code mcpd relay}, wired by the same code
 * ({@link RoleHost#bindShared}, {@link RelayBeans}), configured from the {@code MCPD_*} environment variables.
 *
 * <p>JBang compiles this file when it is given to {@code camel run}, against the mcpd classes given with it
 * ({@code target/original-mcpd.jar}). The listen address is not set here: the HTTP server is configured before route
 * files (and this class) are loaded, so {@code jbang/run.sh} passes {@code camel.server.host}/{@code
 * camel.server.port} from {@code MCPD_LISTEN}, and this class refuses to start when they differ.
 */
public class McpdRelayConfiguration implements CamelConfiguration {

    @Override
    public void configure(CamelContext camel) throws Exception {
        McpdConfig config = McpdConfig.fromEnvironment(System.getenv());
        if (config.relay().upstreams().isEmpty()) {
            throw new IllegalArgumentException("relay needs at least one upstream: set MCPD_UPSTREAMS=URL[,URL…]");
        }
        JBangListen.check(camel, config);
        RelayBeans beans = RelayBeans.open(config, RelayApplication.Tuning.standard());
        camel.addService(new ServiceSupport() { // the spool closes after the routes stopped
            @Override
            protected void doStop() throws Exception {
                beans.close();
            }
        });
        RoleHost.bindShared(config, RelayBeans.PATHS, camel.getRegistry()::bind);
        beans.bindTo(camel.getRegistry()::bind);
        RoleHost.sharedProperties().forEach(camel.getPropertiesComponent()::addOverrideProperty);
        beans.properties().forEach(camel.getPropertiesComponent()::addOverrideProperty);
        JBangListen.servingGate(camel, config.listener().address().port(), RelayBeans.PATHS);
    }
}
