package dev.mcpd.relay;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.InternalTuning;
import dev.mcpd.config.ListenAddress;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.http.RoleHost;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.UnsafeSpoolDirectoryException;
import dev.mcpd.upstream.Backoff;
import dev.mcpd.upstream.UpstreamBoard;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import org.apache.camel.CamelContext;
import org.apache.camel.main.Main;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles the relay: opens the spool, binds the beans the YAML routes under {@code routes/relay/} refer to by name,
 * and runs them on the shared {@link RoleHost}. The routes say what happens; the beans bound here say how.
 */
public final class RelayApplication implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RelayApplication.class);

    private final Main main;
    private final Spool spool;
    private final UpstreamBoard board;
    private final DeadLetters deadLetters;
    private final ListenAddress address;

    private RelayApplication(Main main, Spool spool, UpstreamBoard board, DeadLetters deadLetters,
                             ListenAddress address) {
        this.address = address;
        this.main = main;
        this.spool = spool;
        this.board = board;
        this.deadLetters = deadLetters;
    }

    /**
     * What is fixed in production ({@link InternalTuning#DEFAULT}) but a test must make shorter: the upstream backoff,
     * the probe interval (null: the configured {@code --probe-interval-seconds}; a test may go below a second) and up
     * window, Camel properties such as the delivery timeout and the TLS reload period, and the clock every time is
     * read from.
     */
    public record Tuning(Backoff backoff, Duration probeInterval, Duration upWindow,
                         Map<String, String> camelProperties, InstantSource clock) {
        /** With the system clock. */
        public Tuning(Backoff backoff, Duration probeInterval, Duration upWindow, Map<String, String> camelProperties) {
            this(backoff, probeInterval, upWindow, camelProperties, InstantSource.system());
        }

        /** As in production: the probe interval is {@code --probe-interval-seconds}. */
        public static Tuning standard() {
            return new Tuning(Backoff.standard(), null, InternalTuning.DEFAULT.upWindow(), Map.of());
        }

        /** This tuning, with the probe interval of {@code --probe-interval-seconds} (tests of the health checks). */
        public Tuning withConfiguredProbes() {
            return new Tuning(backoff, null, upWindow, camelProperties, clock);
        }

        public Tuning withProbes(Duration interval, Duration window) {
            return new Tuning(backoff, interval, window, camelProperties, clock);
        }

        /**
         * How long an answer may pause before the attempt is a timeout (and a drop, for the upstream's window): the
         * fixed {@link InternalTuning#deliveryTimeout()}, or {@link InternalTuning#DELIVERY_TIMEOUT_PROPERTY} among the
         * properties or the JVM's system properties (tests). The board's windows and the HTTP client both read this.
         */
        public Duration deliveryTimeout() {
            String millis = camelProperties.getOrDefault(InternalTuning.DELIVERY_TIMEOUT_PROPERTY,
                    System.getProperty(InternalTuning.DELIVERY_TIMEOUT_PROPERTY));
            return millis == null ? InternalTuning.DEFAULT.deliveryTimeout() : Duration.ofMillis(Long.parseLong(millis));
        }
    }

    /** Runs the relay in the foreground until it is stopped (SIGTERM, SIGINT); returns the process exit status. */
    public static int run(McpdConfig config) {
        return RoleHost.runInForeground("relay", () -> start(config).main);
    }

    /** Starts the relay and returns once it serves. */
    public static RelayApplication start(McpdConfig config) {
        return start(config, Tuning.standard());
    }

    /** Starts the relay, tuned, and returns once it serves. */
    public static RelayApplication start(McpdConfig config, Tuning tuning) {
        // The listener first: a TLS file it cannot use is one line before anything else is opened.
        RoleHost server = RoleHost.forRole("relay", RelayBeans.PATHS, config);
        RelayBeans beans;
        try {
            beans = RelayBeans.open(config, tuning);
        } catch (UnsafeSpoolDirectoryException e) {
            server.discard();
            throw new ConfigException(e.getMessage()); // one line, exit status 2: the operator's to fix
        } catch (IOException e) {
            server.discard();
            throw new RoleHost.StartFailure("cannot open the spool at " + config.relay().relaySpoolDir() + ": "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            server.discard();
            throw e;
        }
        server.closeWith(beans);
        // Every step of these routes answers at once or waits without blocking a thread.
        server.onEventLoop("/", "/healthz", "/readyz", "/metrics", "/relay/status", "/relay/spool", "/relay/sync");
        server.tlsReload().watch(beans.upstreamTls()).bindTo(beans.metrics());
        beans.bindTo(server::bind);
        beans.properties().forEach(server::property);
        Main main = server.start();
        LOG.info("relay listening on {}, spooling in {}, {} upstream(s)", server.address(),
                config.relay().relaySpoolDir(),
                config.relay().upstreams().size());
        return new RelayApplication(main, beans.spool(), beans.board(), beans.deadLetters(), server.address());
    }

    /** Stops the relay: routes first (in-flight requests finish), then the spool. */
    @Override
    public void close() {
        main.stop();
    }

    /** The running Camel context (tests that check what the relay relies on in Camel). */
    CamelContext camel() {
        return main.getCamelContext();
    }

    /** Where it listens: with the port the kernel chose, when the configuration said port 0. */
    public ListenAddress address() {
        return address;
    }

    public Spool spool() {
        return spool;
    }

    public UpstreamBoard upstreams() {
        return board;
    }

    public DeadLetters deadLetters() {
        return deadLetters;
    }
}
