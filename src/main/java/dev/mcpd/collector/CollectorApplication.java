package dev.mcpd.collector;

import dev.mcpd.config.ListenAddress;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.http.RoleHost;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.StoreUnavailable;
import org.apache.camel.main.Main;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles the collector ({@code mcpd serve}): opens the store named by {@code --data}, binds the beans the routes
 * under {@code routes/serve/} refer to, and runs them on the shared {@link RoleHost} — same listener, probes,
 * key check, body limit and timeout as the relay.
 */
public final class CollectorApplication implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CollectorApplication.class);

    private final Main main;
    private final JdbcStore store;
    private final ListenAddress address;

    private CollectorApplication(Main main, JdbcStore store, ListenAddress address) {
        this.main = main;
        this.store = store;
        this.address = address;
    }

    /** Runs the collector in the foreground until it is stopped; returns the process exit status. */
    public static int run(McpdConfig config) {
        return RoleHost.runInForeground("collector", () -> start(config).main);
    }

    /** Starts the collector and returns once it serves. */
    public static CollectorApplication start(McpdConfig config) {
        // The listener first: a TLS file it cannot use is one line before the store is opened.
        RoleHost server = RoleHost.forRole("serve", CollectorBeans.PATHS, config);
        CollectorBeans beans;
        try {
            beans = CollectorBeans.open(config);
        } catch (StoreUnavailable e) {
            server.discard();
            throw new RoleHost.StartFailure(e.getMessage(), e);
        } catch (RuntimeException e) {
            server.discard();
            throw e;
        }
        server.closeWith(beans);
        // Every step answers at once or waits without blocking; those that use the store run on a worker (OnWorker).
        server.onEventLoop("/", "/healthz", "/readyz", "/metrics", "/v1/stats", "/collector/status");
        beans.properties().forEach(server::property);
        server.tlsReload().bindTo(beans.registry());
        beans.bindTo(server::bind);
        Main main = server.start();
        beans.startSource();
        LOG.info("collector listening on {}, archiving in {}", server.address(),
                beans.store().location().describe());
        return new CollectorApplication(main, beans.store(), server.address());
    }

    /** Where it listens: with the port the kernel chose, when the configuration said port 0. */
    public ListenAddress address() {
        return address;
    }

    public JdbcStore store() {
        return store;
    }

    @Override
    public void close() {
        main.stop();
    }
}
