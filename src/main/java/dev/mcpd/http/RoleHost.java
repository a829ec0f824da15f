package dev.mcpd.http;

import dev.mcpd.config.ConfigException;
import dev.mcpd.config.InternalTuning;
import dev.mcpd.config.ListenAddress;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.logs.RootCause;
import dev.mcpd.tls.TlsReload;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.Main;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.support.service.ServiceSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the relay and the collector share ("same listener, probes, key check, body limit and timeout"): one
 * Camel Main on {@code --listen}, the routes under {@code routes/common/} (probes, metrics, ingest refusals) plus the
 * role's own folder, and the beans those routes use. A role binds its own beans (among them {@code readiness} and
 * {@code metricsScrape}) and starts it.
 */
public final class RoleHost {

    private static final Logger LOG = LoggerFactory.getLogger(RoleHost.class);

    /**
     * Vert.x worker threads. The routes run on the event loops; the steps that block run on these while the loops go
     * on: a collector's store transactions and body parses ({@code OnWorker}), a dead letter's forced write, an
     * operator's extension route. Threads are made as steps first need them, and stay. 200 is the number from when
     * every ingest exchange held a worker; with the routes on the event loops fewer would do, but a store that stalls
     * holds one thread per waiting request (until its 2 s connection timeout answers 503), so lowering it waits for a
     * measurement of that case.
     */
    static final int HTTP_WORKER_THREADS = 200;

    private final String role;
    private final RolePaths paths;
    private final McpdConfig config;
    private final Main main = new Main();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final ListenerVertx vertx;
    private final TlsReload tlsReload = new TlsReload();
    private volatile ServingGate gate;
    /** The paths whose routes run on the event loop ({@link EventLoopEngine}); the others on worker threads. */
    private final Set<String> onEventLoop = ConcurrentHashMap.newKeySet();
    /** Set by the first sign of a stop (SIGTERM, SIGINT), even while the server is still starting. */
    private final AtomicBoolean stopRequested = new AtomicBoolean();

    private RoleHost(String role, RolePaths paths, McpdConfig config) {
        this.role = role;
        this.paths = paths;
        this.config = config;
        main.configure().withRoutesIncludePattern(ShippedRoutes.locations(role)
                        + config.routes().map(dir -> ",file:" + dir.toAbsolutePath() + "/*.camel.yaml").orElse(""));
        main.addOverrideProperty("camel.server.host", config.listener().address().host());
        main.addOverrideProperty("camel.server.port", Integer.toString(config.listener().address().port()));
        sharedProperties().forEach(main::addOverrideProperty); // a role's property() may override them (tests)
        // Read (and checked: a bad file is a ConfigException) before any thread or resource is made.
        Optional<ListenerTls> listenerTls = ListenerTls.read(config.tls());
        listenerTls.ifPresent(tlsReload::watch);
        bindShared(config, paths, main::bind, tlsReload);
        vertx = ListenerVertx.create(new VertxOptions().setWorkerPoolSize(HTTP_WORKER_THREADS),
                ListenerVertx.idleTimeoutFor(config.listener().requestTimeout()), RefusalAnswer::logFrontDoorRefusal,
                listenerTls, () -> gate != null && gate.routesUp());
        main.bind("vertx", vertx);
        main.bind("platform-http-engine", new EventLoopEngine(onEventLoop, vertx.unreadAnswers()::answered));
        // Camel Main's SIGTERM hook runs this first: from now on the port answers "stopping". A signal that comes while
        // Camel is still starting would otherwise be noticed only after start-up, and Camel's hook would wait up to
        // 25 s for a stop nobody makes while the relay serves (runUntilStopped makes it).
        main.getShutdownStrategy().addShutdownListener(() -> stopRequested.set(true));
        main.addMainListener(new MainListenerSupport() {
            @Override
            public void afterConfigure(BaseMainSupport configured) {
                // Resources (the spool, the store) close with the Camel context, after the routes stopped: within a
                // SIGTERM's shutdown, whatever was accepted is committed before the process ends.
                try {
                    gate = ServingGate.on(configured.getCamelContext(), config.listener().address().port(), paths,
                            stopRequested);
                    configured.getCamelContext().addService(new ResourceCloser());
                } catch (Exception e) {
                    throw new IllegalStateException("cannot tie resources to the Camel context", e);
                }
            }

            @Override
            public void afterStop(BaseMainSupport stopped) {
                // platform-http leaves a Vert.x it found in the registry open; its listener is closed by now.
                vertx.close();
            }
        });
    }

    /**
     * Binds the beans the common routes and both roles' ingest use (also for Camel JBang, whose configuration class
     * binds into its own registry).
     */
    public static void bindShared(McpdConfig config, RolePaths paths, BiConsumer<String, Object> bind) {
        bindShared(config, paths, bind, new TlsReload());
    }

    private static void bindShared(McpdConfig config, RolePaths paths, BiConsumer<String, Object> bind,
                                   TlsReload tlsReload) {
        bind.accept("tlsReload", tlsReload);
        bind.accept("vertxOptions", new VertxOptions().setWorkerPoolSize(HTTP_WORKER_THREADS));
        bind.accept("answerHeaders", new AnswerHeaderPolicy());
        bind.accept("ingestTargetCheck", new IngestTargetCheck(paths));
        bind.accept("senderKeyCheck", new SenderKeyCheck(config.ingest().key()));
        bind.accept("headerFieldCheck", new HeaderFieldCheck());
        bind.accept("bodySizeCheck", new BodySizeCheck(config.listener().maxBodyBytes()));
        BodyBudget bodies = BodyBudget.forHeap(config.listener().maxBodyBytes());
        bind.accept("requestBodyReader", new RequestBodyReader(config.listener().maxBodyBytes(),
                config.listener().requestTimeout(), bodies));
        bind.accept("grpcMessage", new GrpcMessageReader(config.listener().maxBodyBytes(), bodies));
        bind.accept("refusalAnswer", new RefusalAnswer());
        bind.accept("liveness", ProbeAnswer.liveness());
    }

    /**
     * The properties the common routes read as {@code {{…}}}: the TLS reload period. Also for Camel JBang, whose
     * configuration classes set them in their own properties component.
     */
    public static Map<String, String> sharedProperties() {
        return Map.of(InternalTuning.TLS_RELOAD_PROPERTY, Long.toString(InternalTuning.DEFAULT.tlsReload().toMillis()));
    }

    /** A server for a role whose routes live in {@code routes/<role>/}. */
    public static RoleHost forRole(String role, RolePaths paths, McpdConfig config) {
        return new RoleHost(role, paths, config);
    }

    /**
     * Runs the routes from these paths on the event loop that took each request: routes whose every step answers at
     * once or waits without blocking a thread. The others run on platform-http's worker threads.
     */
    public RoleHost onEventLoop(String... paths) {
        onEventLoop.addAll(List.of(paths));
        return this;
    }

    /** The TLS files this server watches (its listener's); a role adds its own uses (the relay's upstreams). */
    public TlsReload tlsReload() {
        return tlsReload;
    }

    /** Makes a bean available to the routes under its name. */
    public RoleHost bind(String name, Object bean) {
        main.bind(name, bean);
        return this;
    }

    /** Sets a property the routes read as {@code {{key}}} (or a Camel setting). */
    public RoleHost property(String key, String value) {
        main.addOverrideProperty(key, value);
        return this;
    }

    /** True once the server began to stop (SIGTERM): readiness then answers 503. */
    public boolean stopping() {
        return stopRequested.get();
    }

    /** Closes the resource when the server stops, after its routes (or when it fails to start). */
    public RoleHost closeWith(AutoCloseable resource) {
        resources.add(resource);
        return this;
    }

    /** Gives up a server that will not be started (its role's resources could not be opened). */
    public void discard() {
        closeResources();
        vertx.close();
    }

    /** Starts and returns once the port answers; on any failure everything is closed again. */
    public Main start() {
        try {
            ListenerCheck.ensureFree(config.listener().address());
        } catch (IOException e) {
            closeResources();
            vertx.close();
            throw new StartFailure(e.getMessage(), e);
        }
        try {
            main.start();
            ListenerCheck.ensureListening(address());
        } catch (Exception e) {
            main.stop();
            closeResources();
            vertx.close();
            throw new StartFailure("cannot start the " + role + " on " + config.listener().address() + ": "
                    + RootCause.lines(e, 2), e);
        }
        return main;
    }

    /**
     * The address the port listens on once started: the configured one, with the port the kernel chose when the
     * configuration said port 0 (tests start servers side by side that way, with no race for a free port).
     */
    public ListenAddress address() {
        ListenAddress configured = config.listener().address();
        return configured.port() != 0 ? configured : new ListenAddress(configured.host(), vertx.boundPort());
    }

    /**
     * Starts a role ({@code start} returns once it serves) and runs it in the foreground until SIGTERM or SIGINT;
     * returns the process exit status: 1, with one line, when it could not start; 2 for a configuration it cannot use
     * (a TLS file, a spool others can write).
     */
    public static int runInForeground(String role, Supplier<Main> start) {
        Main main;
        try {
            main = start.get();
        } catch (StartFailure e) {
            System.err.println("mcpd: " + e.getMessage());
            return 1;
        } catch (ConfigException e) {
            System.err.println("mcpd: " + e.getMessage());
            return 2;
        }
        return runUntilStopped(main, role);
    }

    /** Runs a started server in the foreground until SIGTERM or SIGINT; returns the process exit status. */
    private static int runUntilStopped(Main main, String role) {
        try {
            main.run();
            // run() returns at once, having stopped nothing, when the stop signal came while the server was starting.
            main.stop();
            return main.getExitCode();
        } catch (Exception e) {
            System.err.println("mcpd: " + role + " stopped: " + RootCause.lines(e, 2));
            return 1;
        }
    }

    private void closeResources() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                LOG.warn("closing {} failed: {}", resources.get(i), e.toString());
            }
        }
        resources.clear();
    }

    private final class ResourceCloser extends ServiceSupport {
        @Override
        protected void doStop() {
            closeResources();
        }
    }

    /** The server could not start; the message is one line for the operator. */
    public static final class StartFailure extends RuntimeException {
        public StartFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
