package dev.mcpd.relay;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.delivery.Backoff;
import dev.mcpd.delivery.DeadLetterStep;
import dev.mcpd.delivery.DeliveryOutcome;
import dev.mcpd.delivery.DeliveryWorkers;
import dev.mcpd.delivery.SpoolComponent;
import dev.mcpd.delivery.UpstreamBoard;
import dev.mcpd.delivery.UpstreamFailover;
import dev.mcpd.delivery.UpstreamProbe;
import dev.mcpd.delivery.UpstreamRequest;
import dev.mcpd.ingest.AnswerHeaderPolicy;
import dev.mcpd.ingest.IdempotencyKey;
import dev.mcpd.ingest.IngestAnswer;
import dev.mcpd.ingest.IngestTargetCheck;
import dev.mcpd.ingest.ListenerCheck;
import dev.mcpd.ingest.RefusalAnswer;
import dev.mcpd.ingest.RequestBodyReader;
import dev.mcpd.ingest.SenderKeyCheck;
import dev.mcpd.ingest.SpoolAdmission;
import dev.mcpd.ingest.SpoolWriteStep;
import dev.mcpd.observability.MetricsScrape;
import dev.mcpd.observability.ProbeAnswer;
import dev.mcpd.observability.RelayMetrics;
import dev.mcpd.observability.RelayReadiness;
import dev.mcpd.observability.RelayStatus;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.Main;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.support.service.ServiceSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles the relay: opens the spool, binds the beans the YAML routes refer to by name, and runs Camel Main with
 * the routes under {@code routes/relay/}. The routes say what happens; the beans bound here say how.
 */
public final class RelayApplication implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RelayApplication.class);

    /**
     * Vert.x worker threads. platform-http runs each exchange on one, and an ingest exchange holds it while its body
     * arrives and while its group commit is forced: enough threads keep many concurrent senders in one commit.
     */
    static final int HTTP_WORKER_THREADS = 200;

    private final Main main;
    private final Spool spool;
    private final UpstreamBoard board;
    private final DeadLetters deadLetters;

    private RelayApplication(Main main, Spool spool, UpstreamBoard board, DeadLetters deadLetters) {
        this.main = main;
        this.spool = spool;
        this.board = board;
        this.deadLetters = deadLetters;
    }

    /** Runs the relay in the foreground until it is stopped (SIGTERM, SIGINT); returns the process exit status. */
    public static int run(McpdConfig config) {
        RelayApplication relay;
        try {
            relay = start(config);
        } catch (StartFailure e) {
            System.err.println("mcpd: " + e.getMessage());
            return 1;
        }
        try {
            relay.main.run();
            return relay.main.getExitCode();
        } catch (Exception e) {
            System.err.println("mcpd: relay stopped: " + e.getMessage());
            return 1;
        }
    }

    /**
     * What is fixed in production but a test must make shorter: the upstream backoff, and Camel properties such as
     * the HTTP read timeout.
     */
    public record Tuning(Backoff backoff, Duration probeInterval, Duration upWindow,
                         Map<String, String> camelProperties) {
        public static Tuning standard() {
            return new Tuning(Backoff.standard(), PROBE_INTERVAL, UpstreamBoard.DEFAULT_UP_WINDOW, Map.of());
        }

        public Tuning withProbes(Duration interval, Duration window) {
            return new Tuning(backoff, interval, window, camelProperties);
        }
    }

    /** Upstreams' /readyz are asked this often (SPEC §6). */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(5);

    /** Starts the relay and returns once it serves. */
    public static RelayApplication start(McpdConfig config) {
        return start(config, Tuning.standard());
    }

    /** Starts the relay, tuned, and returns once it serves. */
    public static RelayApplication start(McpdConfig config, Tuning tuning) {
        try {
            ListenerCheck.ensureFree(config.listen());
        } catch (IOException e) {
            throw new StartFailure(e.getMessage(), e);
        }
        Spool spool;
        DeadLetters deadLetters;
        try {
            spool = Spool.open(config.relaySpoolDir(), Spool.Options.unbounded().withMaxBytes(config.spoolMaxBytes()));
            deadLetters = new DeadLetters(config.relaySpoolDir());
        } catch (IOException e) {
            throw new StartFailure("cannot open the spool at " + config.relaySpoolDir() + ": " + e.getMessage(), e);
        }
        UpstreamBoard board = new UpstreamBoard(config.upstreams(), tuning.backoff(), InstantSource.system(),
                tuning.upWindow());
        Main main = assemble(config, spool, board, deadLetters);
        main.addOverrideProperty("mcpd.probe.interval-ms", Long.toString(tuning.probeInterval().toMillis()));
        tuning.camelProperties().forEach(main::addOverrideProperty);
        try {
            main.start();
            ListenerCheck.ensureListening(config.listen());
        } catch (Exception e) {
            main.stop();
            closeQuietly(spool);
            throw new StartFailure("cannot start the relay on " + config.listen() + ": " + rootMessage(e), e);
        }
        LOG.info("relay listening on {}, spooling in {}, {} upstream(s)", config.listen(), config.relaySpoolDir(),
                config.upstreams().size());
        return new RelayApplication(main, spool, board, deadLetters);
    }

    private static Main assemble(McpdConfig config, Spool spool, UpstreamBoard board, DeadLetters deadLetters) {
        Main main = new Main();
        main.configure().withRoutesIncludePattern("classpath:routes/relay/*.camel.yaml");
        main.addOverrideProperty("camel.server.host", config.listen().host());
        main.addOverrideProperty("camel.server.port", Integer.toString(config.listen().port()));
        main.bind("vertxOptions", new VertxOptions().setWorkerPoolSize(HTTP_WORKER_THREADS));
        main.bind("answerHeaders", new AnswerHeaderPolicy());
        main.bind("ingestTargetCheck", new IngestTargetCheck());
        main.bind("senderKeyCheck", new SenderKeyCheck(config.ingestKey()));
        main.bind("requestBodyReader", new RequestBodyReader(config.maxBodyBytes(), config.requestTimeout()));
        main.bind("idempotencyKey", new IdempotencyKey());
        main.bind("spoolWriteStep", new SpoolWriteStep(spool, config.upstreamKey().isEmpty()));
        main.bind("ingestAnswer", new IngestAnswer());
        main.bind("refusalAnswer", new RefusalAnswer());
        main.addOverrideProperty("mcpd.workers", Integer.toString(config.workers()));
        DeliveryWorkers workers = new DeliveryWorkers(config.workers());
        PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RelayMetrics.bind(metrics, spool, board, deadLetters);
        main.bind("spoolAdmission", new SpoolAdmission(spool));
        main.bind("spool", new SpoolComponent(spool, workers));
        main.bind("upstreamProbe", new UpstreamProbe(board));
        main.bind("metricsScrape", new MetricsScrape(metrics));
        main.bind("relayStatus", new RelayStatus(spool, board, deadLetters, workers));
        main.bind("upstreamRequest", new UpstreamRequest(config.upstreamKey()));
        main.bind("upstreamFailover", new UpstreamFailover(board, config.upstreamKey().isPresent()));
        main.bind("deliveryOutcome", new DeliveryOutcome());
        main.bind("deadLetterStep", new DeadLetterStep(deadLetters));
        main.bind("liveness", ProbeAnswer.liveness());
        main.bind("readiness", new ProbeAnswer(new RelayReadiness(spool, board)));
        main.addMainListener(new MainListenerSupport() {
            @Override
            public void afterConfigure(BaseMainSupport configured) {
                // The spool closes with the Camel context, after the routes stopped: within a SIGTERM's shutdown,
                // whatever was accepted is committed before the process ends.
                try {
                    configured.getCamelContext().addService(new SpoolCloser(spool));
                } catch (Exception e) {
                    throw new IllegalStateException("cannot tie the spool to the Camel context", e);
                }
            }
        });
        return main;
    }

    /** Stops the relay: routes first (in-flight requests finish), then the spool. */
    @Override
    public void close() {
        try {
            main.stop();
        } finally {
            closeQuietly(spool);
        }
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

    private static final class SpoolCloser extends ServiceSupport {
        private final Spool spool;

        SpoolCloser(Spool spool) {
            this.spool = spool;
        }

        @Override
        protected void doStop() throws IOException {
            spool.close();
        }
    }

    /** The relay could not start; the message is one line for the operator. */
    public static final class StartFailure extends RuntimeException {
        StartFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static void closeQuietly(Spool spool) {
        try {
            spool.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The innermost cause's message on one line. A YAML route error spans several lines (message, "in file …, line N",
     * the offending text, a caret): the first two say what and where.
     */
    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root.getMessage() == null) {
            return root.getClass().getSimpleName();
        }
        String oneLine = root.getMessage().lines().map(String::strip).filter(l -> !l.isEmpty()).limit(2)
                .collect(java.util.stream.Collectors.joining(" "));
        return oneLine.endsWith(":") ? oneLine.substring(0, oneLine.length() - 1) : oneLine;
    }
}
