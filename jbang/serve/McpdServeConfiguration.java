package dev.mcpd.jbang;

import dev.mcpd.collector.CollectorBeans;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.http.RoleHost;
import org.apache.camel.CamelConfiguration;
import org.apache.camel.CamelContext;
import org.apache.camel.support.service.ServiceSupport;

/**
 * The collector under Camel JBang ({@code camel run}): the same beans as {@code mcpd serve}, wired by the same code
 * ({@link RoleHost#bindShared}, {@link CollectorBeans}), configured from the {@code MCPD_*} environment variables.
 */
public class McpdServeConfiguration implements CamelConfiguration {

    @Override
    public void configure(CamelContext camel) throws Exception {
        McpdConfig config = McpdConfig.fromEnvironment(System.getenv());
        JBangListen.check(camel, config);
        CollectorBeans beans = CollectorBeans.open(config);
        camel.addService(new ServiceSupport() { // the store closes after the routes stopped
            @Override
            protected void doStop() {
                beans.close();
            }
        });
        RoleHost.bindShared(config, CollectorBeans.PATHS, camel.getRegistry()::bind);
        RoleHost.sharedProperties().forEach(camel.getPropertiesComponent()::addOverrideProperty);
        beans.properties().forEach(camel.getPropertiesComponent()::addOverrideProperty);
        beans.bindTo(camel.getRegistry()::bind);
        JBangListen.servingGate(camel, config.listener().address().port(), CollectorBeans.PATHS);
    }
}
